package io.partita.planning.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlanCliTest {

  private static final Path EXAMPLES = Path.of("examples");

  @TempDir
  Path dir;

  private record Result(int code, String out, String err) {}

  /** {@code plan KIND --input FILE} as the launcher's command hands it over. */
  private static Result run(String kind, String inputFlag, String file) {
    assertThat(inputFlag).isEqualTo("--input");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = PlanCli.plan(PlanCli.Kind.valueOf(kind.toUpperCase(java.util.Locale.ROOT)), Path.of(file),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private Path write(String json) throws IOException {
    Path file = dir.resolve("problem.json");
    Files.writeString(file, json);
    return file;
  }

  @Test
  void shouldPlanTheGroupingExample() throws IOException {
    Result r = run("grouping", "--input", EXAMPLES.resolve("grouping-cpu-pool.json").toString());

    assertThat(r.code()).isZero();
    assertThat(r.err()).isEmpty();
    JsonNode plan = new ObjectMapper().readTree(r.out()).get("plan");
    JsonNode rec = plan.get("shares").get(1);
    assertThat(rec.get("modelId").asText()).isEqualTo("ocr-rec");
    assertThat(rec.get("resources").asInt()).isEqualTo(12);
    assertThat(rec.get("plan").get("choice").get("sizes").toString()).isEqualTo("[2,2,2,2,2,1,1]");
    assertThat(rec.get("plan").get("runnersUp")).isNotEmpty();
    assertThat(rec.get("predictedThroughputPerSecond").asDouble()).isGreaterThan(120);
    JsonNode det = plan.get("shares").get(0);
    assertThat(det.get("unmetRequestsPerSecond").asDouble()).isGreaterThan(0);
    assertThat(plan.get("fullyServed").asBoolean()).isFalse();
  }

  @Test
  void shouldPlanTheMappingExampleWithBothSchemesAndTheExactOptimum() throws IOException {
    Result r = run("mapping", "--input", EXAMPLES.resolve("mapping-ocr.json").toString());

    assertThat(r.code()).isZero();
    JsonNode plan = new ObjectMapper().readTree(r.out()).get("plan");
    JsonNode ocr = plan.get("services").get(0);
    assertThat(ocr.get("serviceId").asText()).isEqualTo("ocr");
    assertThat(ocr.get("modelFirst").get("costMsPerSecond").asDouble()).isEqualTo(300.0);
    assertThat(ocr.get("hardwareFirst").get("costMsPerSecond").asDouble()).isEqualTo(408.0);
    assertThat(ocr.get("chosen").asText()).isEqualTo("MODEL_FIRST");
    assertThat(plan.get("costMsPerSecond").asDouble()).isEqualTo(400.0);
    assertThat(plan.get("exact").get("computed").asBoolean()).isTrue();
    assertThat(plan.get("exact").get("gap").asDouble()).isEqualTo(1.0);
  }

  @Test
  void shouldPrintTheImprovementFiguresBesideTheCost() throws IOException {
    Result r = run("mapping", "--input", EXAMPLES.resolve("mapping-ocr.json").toString());

    JsonNode plan = new ObjectMapper().readTree(r.out()).get("plan");
    assertThat(plan.has("improvement")).isFalse();
    assertThat(plan.get("schemesCostMsPerSecond").asDouble()).isGreaterThanOrEqualTo(plan.get("costMsPerSecond").asDouble());
    assertThat(plan.get("improvedFrom").asText()).isNotBlank();
    assertThat(plan.get("improvementSteps").isInt()).isTrue();
  }

  @Test
  void shouldNameTheFieldOfAnInvalidGroupingProblem() throws IOException {
    Path file = write("{\"pool\": {\"size\": 0}, \"models\": [{\"id\": \"m\", \"profile\": [{\"size\": 1, \"latencyMs\": 3}]}]}");

    Result r = run("grouping", "--input", file.toString());

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).contains("pool.size: must be > 0");
  }

  @Test
  void shouldNameNestedFieldsOfAnInvalidGroupingProblem() throws IOException {
    Path file = write("{\"pool\": {\"size\": 4}, \"models\": [{\"id\": \"m\", \"profile\": [{\"size\": 1, \"latencyMs\": -3}]}]}");

    Result r = run("grouping", "--input", file.toString());

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("models[0].profile[0].latencyMs: must be > 0");
  }

  @Test
  void shouldNameTheFieldOfAnInvalidMappingProblem() throws IOException {
    Path file = write("{\"resources\": [{\"id\": \"g\", \"kind\": \"gpu\"}, {\"id\": \"c\", \"kind\": \"cpu\"}],"
        + " \"timings\": {\"a\": {\"g\": 1, \"x\": 2}}, \"services\": [{\"id\": \"s\", \"models\": [{\"model\": \"a\", \"requestsPerSecond\": 1}]}]}");

    Result r = run("mapping", "--input", file.toString());

    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("timings.a.x: unknown resource 'x'");
  }

  @Test
  void shouldReportAModelThatCanRunNowhereWithExitCodeOne() throws IOException {
    Path file = write("{\"resources\": [{\"id\": \"g\", \"kind\": \"gpu\"}, {\"id\": \"c\", \"kind\": \"cpu\"}],"
        + " \"timings\": {\"a\": {\"g\": 1}}, \"services\": [{\"id\": \"s\", \"models\": [{\"model\": \"b\", \"requestsPerSecond\": 1}]}]}");

    Result r = run("mapping", "--input", file.toString());

    assertThat(r.code()).isEqualTo(1);
    assertThat(r.out()).contains("model b of service s can run on no resource");
  }

  @Test
  void shouldRejectMalformedJson() throws IOException {
    Path file = write("{\"pool\": ");

    assertThat(run("grouping", "--input", file.toString()).err()).contains("not valid JSON at line 1");
    assertThat(run("grouping", "--input", file.toString()).code()).isEqualTo(2);
  }
  // Bad usage (no --input, an unknown subcommand, --help) is the launcher's: PartitaCommandTreeTest.
}

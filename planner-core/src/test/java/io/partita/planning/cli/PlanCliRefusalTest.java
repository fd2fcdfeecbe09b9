package io.partita.planning.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.planning.grouping.GroupingProblem;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code partita plan} refuses what it cannot mean: unknown fields, numbers it would have to narrow
 * or that overflow the planner's sums, pools too large for the exact programs, NaN, missing files.
 * Each refusal is one line on stderr naming the field (or the path), with exit code 2.
 */
class PlanCliRefusalTest {

  @TempDir
  Path dir;

  private record Result(int code, String out, String err) {}

  private Result plan(PlanCli.Kind kind, String json) throws IOException {
    Path file = dir.resolve("problem.json");
    Files.writeString(file, json);
    return plan(kind, file);
  }

  private static Result plan(PlanCli.Kind kind, Path file) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = PlanCli.plan(kind, file, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static String grouping(String pool, String model) {
    return "{\"pool\": {" + pool + "}, \"models\": [{\"id\": \"m\", " + model + "}]}";
  }

  private static final String PROFILE = "\"profile\": [{\"size\": 1, \"latencyMs\": 10}]";

  private static void assertRefused(Result r, String message) {
    assertThat(r.code()).as(r.err()).isEqualTo(PlanCli.INVALID);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).contains(message);
    assertThat(r.err().strip().lines()).as("one line").hasSize(1);
  }

  @Test
  void shouldRefuseAnUnknownTopLevelFieldOfAGroupingProblem() throws IOException {
    Result r = plan(PlanCli.Kind.GROUPING, "{\"poolSize\": 4, \"pool\": {\"size\": 4}, \"models\": [{\"id\": \"m\", "
        + PROFILE + "}]}");

    assertRefused(r, "poolSize: unknown field; known here: pool, objective, models");
  }

  @Test
  void shouldRefuseAMisspelledSloInsteadOfDroppingIt() throws IOException {
    Result r = plan(PlanCli.Kind.GROUPING, grouping("\"size\": 4", "\"sloMS\": 5, " + PROFILE));

    assertRefused(r, "models[0].sloMS: unknown field (did you mean 'sloMs'?)");
  }

  @Test
  void shouldRefuseAMisspelledRequestRateOfAMappingStage() throws IOException {
    Result r = plan(PlanCli.Kind.MAPPING, "{\"resources\": [{\"id\": \"g\", \"kind\": \"gpu\"}, {\"id\": \"c\", \"kind\": \"cpu\"}],"
        + " \"timings\": {\"a\": {\"g\": 1}}, \"services\": [{\"id\": \"s\", \"models\": [{\"model\": \"a\","
        + " \"requestPerSecond\": 1, \"requestsPerSecond\": 1}]}]}");

    assertRefused(r, "services[0].models[0].requestPerSecond: unknown field (did you mean 'requestsPerSecond'?)");
  }

  @Test
  void shouldRefuseABatchSizeBeyondAnIntegerInsteadOfNarrowingIt() throws IOException {
    Result r = plan(PlanCli.Kind.GROUPING, grouping("\"size\": 4", "\"batchSize\": 4294967297, " + PROFILE));

    assertRefused(r, "models[0].batchSize: must be > 0 and at most 2147483647, was 4294967297");
  }

  @Test
  void shouldRefuseAMemoryFigureBeyondSixtyFourBits() throws IOException {
    Result r = plan(PlanCli.Kind.GROUPING, grouping("\"size\": 4, \"memoryBytes\": 18446744073709551616", PROFILE));

    assertRefused(r, "pool.memoryBytes: must be >= 0 and at most 9223372036854775807, was 18446744073709551616");
  }

  @Test
  void shouldPlanHugeInstancesWithExactMemorySumsInsteadOfOverflowing() throws IOException {
    // Two instances of 2^62 B need 2^63 B, one more than the pool: only one partition fits.
    Result r = plan(PlanCli.Kind.GROUPING, grouping("\"size\": 4, \"memoryBytes\": 9223372036854775807",
        "\"profile\": [{\"size\": 1, \"latencyMs\": 10, \"memoryBytes\": 4611686018427387904}]"));

    assertThat(r.code()).as(r.err()).isEqualTo(PlanCli.OK);
    JsonNode choice = new ObjectMapper().readTree(r.out()).get("plan").get("shares").get(0).get("plan").get("choice");
    assertThat(choice.get("sizes").toString()).isEqualTo("[1]");
    assertThat(choice.get("memoryBytes").asLong()).isEqualTo(1L << 62);
  }

  @Test
  void shouldRefuseAPoolLargerThanTheExactProgramsCanHold() throws IOException {
    for (String size : new String[] {"1000000000", "2147483647", "1025"}) {
      Result r = plan(PlanCli.Kind.GROUPING, grouping("\"size\": " + size, PROFILE));

      assertRefused(r, "pool.size: must be > 0 and at most " + GroupingProblem.MAX_POOL_SIZE + ", was " + size);
    }
  }

  @Test
  void shouldPlanAPoolAtTheBound() throws IOException {
    Result r = plan(PlanCli.Kind.GROUPING, grouping("\"size\": " + GroupingProblem.MAX_POOL_SIZE,
        "\"profile\": [{\"size\": 1, \"latencyMs\": 10}, {\"size\": 3, \"latencyMs\": 4}]"));

    assertThat(r.code()).as(r.err()).isEqualTo(PlanCli.OK);
  }

  @Test
  void shouldNameTheFieldOfANotANumber() throws IOException {
    Result r = plan(PlanCli.Kind.GROUPING, grouping("\"size\": 4", "\"profile\": [{\"size\": 1, \"latencyMs\": NaN}]"));

    assertRefused(r, "models[0].profile[0].latencyMs: must be a finite number, was NaN");
  }

  @Test
  void shouldRefuseALatencyTooLargeToSumIntoLoads() throws IOException {
    Result r = plan(PlanCli.Kind.MAPPING, "{\"resources\": [{\"id\": \"g\", \"kind\": \"gpu\"}, {\"id\": \"c\", \"kind\": \"cpu\"}],"
        + " \"timings\": {\"a\": {\"g\": 1e300}}, \"services\": [{\"id\": \"s\", \"models\": [{\"model\": \"a\","
        + " \"requestsPerSecond\": 1}]}]}");

    assertRefused(r, "timings.a.g: must be at most 1.0E9, was 1.0E300");
  }

  @Test
  void shouldNameTheInputPathOfAMissingFile() {
    Path missing = dir.resolve("nope.json");

    Result r = plan(PlanCli.Kind.MAPPING, missing);

    assertRefused(r, "--input " + missing + ": no such file");
  }

  @Test
  void shouldRefuseAFieldGivenTwice() throws IOException {
    Result r = plan(PlanCli.Kind.GROUPING, "{\"pool\": {\"size\": 4, \"size\": 8}, \"models\": [{\"id\": \"m\", "
        + PROFILE + "}]}");

    assertRefused(r, "Duplicate field 'size'");
  }

  @Test
  void shouldRefuseAMappingLargerThanTheHeuristicPlansInSeconds() throws IOException {
    StringBuilder resources = new StringBuilder("{\"id\": \"g\", \"kind\": \"gpu\"}");
    for (int i = 0; i < PlanCli.MAX_RESOURCES; i++) {
      resources.append(", {\"id\": \"c").append(i).append("\", \"kind\": \"cpu\"}");
    }
    StringBuilder stages = new StringBuilder();
    for (int i = 0; i <= PlanCli.MAX_PLACEMENTS; i++) {
      stages.append(i == 0 ? "" : ", ").append("{\"model\": \"m").append(i).append("\", \"requestsPerSecond\": 1}");
    }
    String tooManyResources = "{\"resources\": [" + resources + "], \"timings\": {},"
        + " \"services\": [{\"id\": \"s\", \"models\": [{\"model\": \"a\", \"requestsPerSecond\": 1}]}]}";
    String tooManyPlacements = "{\"resources\": [{\"id\": \"g\", \"kind\": \"gpu\"}, {\"id\": \"c\", \"kind\": \"cpu\"}],"
        + " \"timings\": {}, \"services\": [{\"id\": \"s\", \"models\": [" + stages + "]}]}";

    assertRefused(plan(PlanCli.Kind.MAPPING, tooManyResources), "resources: at most " + PlanCli.MAX_RESOURCES
        + " resources can be mapped, found " + (PlanCli.MAX_RESOURCES + 1));
    assertRefused(plan(PlanCli.Kind.MAPPING, tooManyPlacements), "services[0].models: the services place more than "
        + PlanCli.MAX_PLACEMENTS);
  }

  @Test
  void shouldRefuseAnExactBoundAboveWhatTheSearchCanFinish() throws IOException {
    Result r = plan(PlanCli.Kind.MAPPING, "{\"resources\": [{\"id\": \"g\", \"kind\": \"gpu\"}, {\"id\": \"c\", \"kind\": \"cpu\"}],"
        + " \"timings\": {\"a\": {\"g\": 1}}, \"services\": [{\"id\": \"s\", \"models\": [{\"model\": \"a\","
        + " \"requestsPerSecond\": 1}]}], \"exact\": {\"maxPlacements\": 4294967297}}");

    assertRefused(r, "exact.maxPlacements: must be >= 0 and at most 14, was 4294967297");
  }
}

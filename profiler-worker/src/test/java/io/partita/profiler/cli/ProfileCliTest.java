package io.partita.profiler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.profiler.onnx.TestModels;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfileCliTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  static Path repo;

  record Run(int code, String out, String err) {
    List<JsonNode> lines() throws Exception {
      List<JsonNode> nodes = new ArrayList<>();
      for (String line : out.split("\n")) {
        if (!line.isBlank()) {
          nodes.add(JSON.readTree(line));
        }
      }
      return nodes;
    }
  }

  static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = ProfileCli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @BeforeAll
  static void writeRepository() {
    TestModels.writeToRepo(repo, "mm", "2", TestModels.matMul(-1, 32, 32));
    TestModels.writeToRepo(repo, "mm", "10", TestModels.matMul(-1, 32, 32)); // versions share a signature
    TestModels.writeToRepo(repo, "fixed", "1", TestModels.matMul(4, 8, 8));
  }

  @Test
  void shouldPrintOneJsonObjectPerPointForTheHighestVersion() throws Exception {
    Run r = run("--model-repo", repo.toString(), "--model", "mm", "--sizes", "1", "--batches", "1,8",
        "--budget-ms", "50", "--json");
    assertThat(r.code()).as(r.err()).isEqualTo(ProfileCli.OK);
    List<JsonNode> lines = r.lines();
    assertThat(lines).hasSize(2);
    for (JsonNode n : lines) {
      assertThat(n.get("model").asText()).isEqualTo("mm");
      assertThat(n.get("version").asText()).isEqualTo("10"); // numerically highest, not "2"
      assertThat(n.get("pool").asText()).isEqualTo("cpu");
      assertThat(n.get("provider").asText()).isEqualTo("CPU");
      assertThat(n.get("size").asInt()).isEqualTo(1);
      assertThat(n.get("ok").asBoolean()).isTrue();
      assertThat(n.get("p50Ms").asDouble()).isPositive().isLessThanOrEqualTo(n.get("p90Ms").asDouble());
      assertThat(n.get("p90Ms").asDouble()).isLessThanOrEqualTo(n.get("p99Ms").asDouble());
      assertThat(n.get("throughput").asDouble()).isPositive();
      assertThat(n.get("memoryBytes").asLong()).isPositive();
    }
    assertThat(lines).extracting(n -> n.get("batch").asInt()).containsExactly(1, 8);
    assertThat(r.err()).contains("2/2");
  }

  @Test
  void shouldPrintATableForAChosenVersion() {
    Run r = run("--model-repo", repo.toString(), "--model", "mm", "--version", "2", "--sizes", "1",
        "--batches", "2", "--budget-ms", "50");
    assertThat(r.code()).as(r.err()).isEqualTo(ProfileCli.OK);
    assertThat(r.out()).contains("model mm version 2").contains("p50 ms").contains("items/s");
    assertThat(r.out().lines().filter(l -> l.startsWith("cpu"))).hasSize(1);
    assertThat(r.err()).contains("[########################] 1/1");
  }

  @Test
  void shouldPrintFailedPointsWithTheirErrorAndExitWithThree() throws Exception {
    Run r = run("--model-repo", repo.toString(), "--model", "fixed", "--sizes", "1", "--batches", "4,8",
        "--budget-ms", "30", "--json");
    assertThat(r.code()).isEqualTo(ProfileCli.SOME_FAILED);
    List<JsonNode> lines = r.lines();
    assertThat(lines.get(0).get("ok").asBoolean()).isTrue();
    assertThat(lines.get(1).get("ok").asBoolean()).isFalse();
    assertThat(lines.get(1).get("error").asText()).contains("fixed batch dimension of 4");
    assertThat(lines.get(1).has("p50Ms")).isFalse();
  }

  @Test
  void shouldMeasureAGroupingAtOnce() throws Exception {
    Run r = run("--model-repo", repo.toString(), "--model", "mm", "--grouping", "1,1", "--batches", "4",
        "--budget-ms", "50", "--json");
    JsonNode g = r.lines().get(0);
    assertThat(g.get("grouping")).hasSize(2);
    if (g.get("ok").asBoolean()) {
      assertThat(r.code()).isEqualTo(ProfileCli.OK);
      assertThat(g.get("partitions")).hasSize(2);
      assertThat(g.get("aggregateThroughput").asDouble()).isPositive();
    } else {
      assertThat(g.get("error").asText()).contains("usable");
    }
  }

  @Test
  void shouldPrintTheHostEnvironment() throws Exception {
    Run r = run("--env", "--host-id", "test-host");
    assertThat(r.code()).isEqualTo(ProfileCli.OK);
    JsonNode env = JSON.readTree(r.out());
    assertThat(env.get("hostId").asText()).isEqualTo("test-host");
    assertThat(env.get("usableCores").asInt()).isPositive();
    assertThat(env.get("executionProviders").get(0).asText()).isEqualTo("CPU");
  }

  @Test
  void shouldRunTheBaselineSearch() throws Exception {
    Run r = run("--baseline", "--budget-ms", "15", "--json");
    assertThat(r.code()).as(r.err()).isEqualTo(ProfileCli.OK);
    JsonNode b = r.lines().get(0);
    assertThat(b.get("score").asDouble()).isPositive();
    assertThat(b.get("pointsMeasured").asInt()).isLessThanOrEqualTo(b.get("gridSize").asInt());
    assertThat(b.has("gridBest")).isFalse();
  }

  @Test
  void shouldNameTheFlagInEveryUsageError() {
    assertUsage(run("--model", "mm"), "--model-repo is required");
    assertUsage(run("--model-repo", repo.toString()), "--model is required");
    assertUsage(run("--model-repo", repo.toString(), "--model", "nope"), "--model: no model 'nope'");
    assertUsage(run("--model-repo", repo.resolve("missing").toString(), "--model", "mm"), "--model-repo:");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--version", "7"), "--version: no version '7'");
    assertUsage(run("--model-repo", repo.toString(), "--model", "../mm"), "--model: no model '../mm'");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--sizes", "1,x"), "--sizes: expected a positive whole number, got 'x'");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--batches", "0"), "--batches:");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--budget-ms"), "--budget-ms needs a value");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--providers", "TPU"), "--providers: unknown provider 'TPU'");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--dim", "L"), "--dim: expected NAME=SIZE");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--grouping", "1,1", "--sizes", "1"), "--grouping and --sizes");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--broker", "localhost"), "--broker: expected HOST:PORT");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--broker", "h:99999"), "--broker: expected HOST:PORT");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--topic-prefix", "p"), "--topic-prefix only applies with --broker");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--broker", "h:1", "--topic-prefix", "a/b"), "--topic-prefix: topic prefix 'a/b'");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--no-baseline"), "--no-baseline only applies with --broker");
    assertUsage(run("profile", "--model-repo", repo.toString(), "--model", "mm"), "unknown flag 'profile'");
    assertUsage(run("--model-repo", repo.toString(), "--model", "mm", "--compare-grid"), "--compare-grid only applies with --baseline");
    assertUsage(run("--env", "--baseline"), "--baseline cannot be combined with --env");
    assertUsage(run("--frobnicate"), "unknown flag '--frobnicate'");
  }

  @Test
  void shouldPrintTheUsageOnHelp() {
    Run r = run("--help");
    assertThat(r.code()).isEqualTo(ProfileCli.OK);
    assertThat(r.out()).contains("usage: partita profile").contains("--broker HOST:PORT");
    assertThat(r.err()).isEmpty();
  }

  private static void assertUsage(Run r, String message) {
    assertThat(r.code()).isEqualTo(ProfileCli.USAGE);
    assertThat(r.err()).contains(message);
    assertThat(r.out()).isEmpty();
  }
}

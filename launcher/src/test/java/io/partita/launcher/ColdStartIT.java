package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.models.onnx.OnnxGraphBuilder;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.PlannerConfig;
import io.partita.planner.PlannerService;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.ProfilerService;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A cold start as {@code ./partita local --model-repo DIR} runs it (planner, catalog, worker
 * following the plan, gateway routing by the plan, profiler measuring every model at start), with
 * a repository of models that each have their own signature (input {@code x<i>} of width
 * {@code 2 + i}, output {@code y<i>} = {@code (i + 1) * x + 100 * i}), on at most two cores. From
 * launch on, every model is called over HTTP in rounds and {@code /v2/health/ready} is read before
 * each round: every model answers 200 (the figures are printed), no 200 ever carries another model's output,
 * every model answers 200 in each round that began with the server ready (so it is never ready while a
 * model cannot answer), and once all have answered, they keep answering
 * while the profiler's measurements replace the default plan.
 */
@ExtendWith(KafkaFixture.class)
class ColdStartIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  /**
   * The bound on the first 200 of every model, from launch. The goal is 20 s on an idle 2-core
   * host (BENCHMARKS.md gives measured figures); the default leaves room for a machine shared with other
   * builds, where the same start takes several times longer: set
   * {@code -Dpartita.coldstart.first.answer.s=20} to hold a quiet machine to the goal.
   */
  private static final Duration FIRST_ANSWER = Duration.ofSeconds(Long.getLong("partita.coldstart.first.answer.s", 120));
  private static final Duration KEEP_ANSWERING = Duration.ofSeconds(15);

  @TempDir Path dir;
  private final List<AutoCloseable> running = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (int i = running.size() - 1; i >= 0; i--) {
      running.get(i).close();
    }
  }

  @ParameterizedTest(name = "{0} models")
  @ValueSource(ints = {3, 8})
  void shouldAnswerEveryModelSoonAfterLaunchAndBeReadyOnlyWhenAllAre(int models) throws Exception {
    Path repo = dir.resolve("models");
    for (int i = 0; i < models; i++) {
      writeModel(repo, i);
    }
    Topics topics = new Topics(KafkaFixture.uniquePrefix("cold"));
    Map<String, String> flags = new TreeMap<>(Map.ofEntries(
        Map.entry("kafka.bootstrap.servers", KafkaFixture.bootstrapServers()),
        Map.entry("topic.prefix", topics.prefix()),
        Map.entry("model.repo", repo.toString()),
        Map.entry("host.id", "cold-host"),
        Map.entry("http.port", "0"),
        Map.entry("gateway.id", "cold"),
        Map.entry("gateway.routing", "plan"),
        Map.entry("worker.threads", "0"),
        Map.entry("worker.follow-plan", "true"),
        Map.entry("planner.state.dir", dir.resolve("planner").toString()),
        Map.entry("planner.replication.factor", "1"),
        Map.entry("topics.replication", "1")));
    Settings settings = Settings.of(flags);

    long launch = System.nanoTime();
    PlannerConfig plannerConfig = PlannerConfig.from(settings);
    start(new PlannerService(plannerConfig));
    PlannerCommand.publishCatalog(plannerConfig, repo, plannerConfig.codecs());
    InferenceWorker worker = start(new InferenceWorker(WorkerConfig.from(settings)));
    Gateway gateway = start(new Gateway(GatewayConfig.from(settings)));
    ProfilerService profiler = start(new ProfilerService(ProfilerConfig.from(settings)));
    for (String model : ModelRepository.scan(repo).models().keySet()) {
      profiler.profileNow(model, null, 100);
    }
    String url = "http://localhost:" + gateway.port();
    HttpClient http = HttpClient.newHttpClient();

    Map<Integer, Long> firstAnswerMs = new TreeMap<>();
    Map<Integer, Integer> codesAfterAllAnswered = new TreeMap<>();
    List<String> wrong = new ArrayList<>();
    List<String> readyTooEarly = new ArrayList<>();
    int[] notReadyRounds = {0};
    long[] allAnsweredAt = {-1};
    await().atMost(FIRST_ANSWER.plus(KEEP_ANSWERING).plusSeconds(10)).pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200)).until(() -> {
          long now = elapsedMs(launch);
          int health = get(http, url + "/v2/health/ready");
          if (health == 503) {
            notReadyRounds[0]++;
          }
          for (int i = 0; i < models; i++) {
            HttpResponse<String> response = infer(http, url, i);
            if (health == 200 && response.statusCode() != 200) {
              readyTooEarly.add("ready at " + now + " ms, then m" + i + " answered " + response.statusCode());
            }
            if (response.statusCode() == 200) {
              String mismatch = check(i, response.body());
              if (mismatch != null) {
                wrong.add(mismatch);
              }
              firstAnswerMs.putIfAbsent(i, elapsedMs(launch));
            }
            if (allAnsweredAt[0] >= 0) {
              codesAfterAllAnswered.merge(response.statusCode(), 1, Integer::sum);
            }
          }
          if (allAnsweredAt[0] < 0 && firstAnswerMs.size() == models) {
            allAnsweredAt[0] = elapsedMs(launch);
          }
          return allAnsweredAt[0] >= 0 && elapsedMs(launch) - allAnsweredAt[0] >= KEEP_ANSWERING.toMillis();
        });
    System.out.printf("ColdStartIT: %d models on %d cores: first 200 per model (ms after launch) %s; all answered at %d ms; "
        + "answers in the %d s after that: %s%n", models, Math.min(2, Runtime.getRuntime().availableProcessors()),
        firstAnswerMs, allAnsweredAt[0], KEEP_ANSWERING.toSeconds(), codesAfterAllAnswered);

    assertThat(wrong).as("200 answers carrying another model's output").isEmpty();
    assertThat(firstAnswerMs.values()).as("first 200 of each model, ms after launch").allMatch(ms -> ms <= FIRST_ANSWER.toMillis());
    // How many rounds saw 503 before the first plan is printed, not asserted: on an idle machine the
    // stack can be ready before the first round. What matters is never 200 too early (below).
    System.out.printf("ColdStartIT: /v2/health/ready was 503 in %d round(s) before every model was ready%n", notReadyRounds[0]);
    assertThat(readyTooEarly).as("/v2/health/ready 200 while a model did not answer 200 right after").isEmpty();
    assertThat(codesAfterAllAnswered.keySet()).as("answers once every model had answered").containsOnly(200);
    assertThat(get(http, url + "/v2/health/ready")).isEqualTo(200);
    assertThat(worker.failure()).isNull();
  }

  /** Model {@code m<i>}: {@code y<i> = (i + 1) * x<i> + 100 * i}, width {@code 2 + i}, rows dynamic. */
  static void writeModel(Path repo, int i) throws Exception {
    int width = 2 + i;
    float[] w = new float[width * width];
    float[] b = new float[width];
    for (int k = 0; k < width; k++) {
      w[k * width + k] = i + 1;
      b[k] = 100f * i;
    }
    Path file = repo.resolve("m" + i).resolve("1").resolve("model.onnx");
    Files.createDirectories(file.getParent());
    Files.write(file, new OnnxGraphBuilder("m" + i, "cold-start-test")
        .input("x" + i, DataType.FLOAT, "n", width)
        .initializer("w", w, width, width)
        .initializer("b", b, width)
        .matMul("x" + i, "w", "xw")
        .add("xw", "b", "y" + i)
        .output("y" + i, DataType.FLOAT, "n", width)
        .toBytes());
  }

  static HttpResponse<String> infer(HttpClient http, String url, int i) throws Exception {
    StringBuilder data = new StringBuilder();
    for (int k = 0; k < 2 + i; k++) {
      data.append(k == 0 ? "" : ",").append(k + 1);
    }
    String body = "{\"inputs\":[{\"name\":\"x" + i + "\",\"datatype\":\"FP32\",\"shape\":[1," + (2 + i) + "],\"data\":["
        + data + "]}]}";
    return http.send(HttpRequest.newBuilder(URI.create(url + "/v2/models/m" + i + "/infer")).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Null when the body is model {@code m<i>}'s answer to {@code 1..width}, else what is wrong. */
  static String check(int i, String body) throws Exception {
    JsonNode root = JSON.readTree(body);
    JsonNode out = root.path("outputs").path(0);
    List<Double> expected = new ArrayList<>();
    for (int k = 0; k < 2 + i; k++) {
      expected.add((double) (i + 1) * (k + 1) + 100.0 * i);
    }
    List<Double> got = new ArrayList<>();
    out.path("data").forEach(v -> got.add(v.asDouble()));
    if (!root.path("model_name").asText().equals("m" + i) || !out.path("name").asText().equals("y" + i) || !got.equals(expected)) {
      return "m" + i + " answered " + body;
    }
    return null;
  }

  static int get(HttpClient http, String url) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).GET().build(),
        HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  private static long elapsedMs(long since) {
    return (System.nanoTime() - since) / 1_000_000;
  }

  private <T extends io.partita.common.Service> T start(T service) throws Exception {
    service.start();
    running.add(service);
    return service;
  }
}

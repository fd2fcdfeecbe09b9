package io.partita.gateway;

import static io.partita.gateway.JobLinesFixture.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import com.fasterxml.jackson.databind.JsonNode;
import io.partita.avro.JobItemResult;
import io.partita.avro.JobItemResults;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.testkit.ChildJvm;
import io.partita.testkit.KafkaFixture;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A packed batch job under chaos: a job of 20,000 rows of the demo MLP, sent packed (several
 * rows per request), whose gateway is killed with SIGKILL a fifth of the way in and whose worker is
 * killed with SIGKILL about two thirds of the way in, each in its own JVM, each replaced by a new
 * one. Then every row has exactly one result, in input order, on the results endpoint and on the
 * results topic, and each equals a direct ONNX Runtime run of that row alone within 1e-5.
 */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class PackedJobKillIT {
  private static final Logger log = LoggerFactory.getLogger(PackedJobKillIT.class);
  private static final int ROWS = 20_000;
  private static final String MODEL = DemoMlp.BASE_SERVICE_MODEL;

  @TempDir Path repo;
  private final List<Process> processes = new ArrayList<>();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

  @AfterEach
  void tearDown() {
    processes.forEach(Process::destroyForcibly);
  }

  @Test
  void shouldGiveEveryRowOfAPackedJobExactlyOneCorrectResultInOrderWhenTheGatewayAndTheWorkerAreKilled() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("packkill"));
    Map<String, String> gatewaySettings = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "gateway.routing", "any", // no planner in this test: produce without routes
        "gateway.max.in.flight", "4", // two job requests in flight, so the job lasts long enough to be killed in
        "gateway.jobs.pack.rows", "16",
        "gateway.jobs.item.timeout.ms", "20000",
        "gateway.jobs.retries", "5",
        "kafka.session.timeout.ms", "6000", // the dead gateway's lead on the jobs group passes after 6 s
        "gateway.dashboard.enabled", "false"));
    float[][] rows = DemoMlp.sampleInput(ROWS, 15);

    Process worker = startChild("worker", topics, 0, List.of(
        "kafka.bootstrap.servers=" + KafkaFixture.bootstrapServers(), "topic.prefix=" + topics.prefix(),
        "model.repo=" + repo, "host.id=packkill-host", "worker.threads=1", "worker.metrics.port=" + freePort(),
        "worker.group.instance.id=" + topics.prefix() + "-worker")); // the new worker takes the dead one's partitions at once
    int firstPort = freePort();
    List<String> firstArgs = new ArrayList<>();
    gatewaySettings.forEach((k, v) -> firstArgs.add(k + "=" + v));
    firstArgs.addAll(List.of("http.port=" + firstPort, "gateway.grpc-port=-1", "gateway.id=first"));
    Process firstGateway = startChild("gateway", topics, 0, firstArgs);
    String first = "http://localhost:" + firstPort;
    await().atMost(Duration.ofSeconds(180)).until(() -> status(first + "/v2/health/ready") == 200);

    HttpResponse<String> created = http.send(HttpRequest.newBuilder(URI.create(first + "/v2/jobs?model=" + MODEL))
        .POST(HttpRequest.BodyPublishers.ofString(JobLinesFixture.lines(rows))).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    String id = JSON.readTree(created.body()).get("id").asText();

    // Kill 1: the gateway that runs the job, a fifth of the way in.
    await().atMost(Duration.ofSeconds(300)).pollInterval(Duration.ofMillis(10)).until(() -> done(first, id) >= ROWS / 5);
    firstGateway.destroyForcibly();
    assertThat(firstGateway.waitFor(30, TimeUnit.SECONDS)).isTrue();
    long atFirstKill = resultsOnTopic(topics);
    log.info("Kill 1 (gateway): {} of {} rows had a result", atFirstKill, ROWS);
    assertThat(atFirstKill).as("killed mid-way").isBetween(1L, (long) ROWS - 1);

    gatewaySettings.put("gateway.id", "second");
    gatewaySettings.put("http.port", "0");
    try (Gateway second = new Gateway(GatewayConfig.from(Settings.of(gatewaySettings)))) {
      second.start();
      String secondUrl = "http://localhost:" + second.port();
      // Kill 2: the worker, about two thirds of the way in, while the second gateway runs the job.
      await().atMost(Duration.ofSeconds(300)).pollInterval(Duration.ofMillis(10))
          .until(() -> second.runsJobs() && done(secondUrl, id) >= ROWS * 2 / 3);
      worker.destroyForcibly();
      assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
      long atSecondKill = resultsOnTopic(topics);
      log.info("Kill 2 (worker): {} of {} rows had a result", atSecondKill, ROWS);
      assertThat(atSecondKill).as("killed mid-way").isLessThan(ROWS);
      startChild("worker", topics, 1, List.of(
          "kafka.bootstrap.servers=" + KafkaFixture.bootstrapServers(), "topic.prefix=" + topics.prefix(),
          "model.repo=" + repo, "host.id=packkill-host", "worker.threads=1", "worker.metrics.port=" + freePort(),
          "worker.group.instance.id=" + topics.prefix() + "-worker"));

      await().atMost(Duration.ofSeconds(300)).pollInterval(Duration.ofMillis(200))
          .until(() -> JSON.readTree(body(secondUrl + "/v2/jobs/" + id)).get("state").asText().equals("DONE"));
      JsonNode status = JSON.readTree(body(secondUrl + "/v2/jobs/" + id));
      assertThat(status.get("runner").asText()).isEqualTo("second");
      assertThat(status.get("done").asInt()).isEqualTo(ROWS);
      assertThat(status.get("failed").asInt()).isZero();

      // The results endpoint: one line per row, in input order, no error.
      List<JsonNode> lines = JobLinesFixture.parseLines(body(secondUrl + "/v2/jobs/" + id + "/results"));
      assertThat(lines).hasSize(ROWS);
      for (int i = 0; i < ROWS; i++) {
        assertThat(lines.get(i).get("index").asInt()).isEqualTo(i);
        assertThat(lines.get(i).has("error")).as("row %d: %s", i, lines.get(i)).isFalse();
      }
    }

    // The results topic: exactly one result per row, each equal to a direct run of the row alone;
    // a record holds the rows of one request (fewer records than rows: the job was packed).
    long recordCount = resultsOnTopic(topics);
    assertThat(recordCount).isLessThan(ROWS);
    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.read((int) recordCount, Duration.ofSeconds(60), topics.jobItems());
    var codec = Codecs.singleObject().codec(JobItemResults.class);
    int results = 0;
    RepositoryIndex index = ModelRepository.scan(repo);
    BitSet seen = new BitSet(ROWS);
    Map<String, OrtSession> sessions = new HashMap<>();
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      double worst = 0;
      for (JobItemResult result : records.stream().flatMap(r -> codec.decode(r.topic(), r.value()).getResults().stream()).toList()) {
        results++;
        int i = result.getIndex();
        assertThat(seen.get(i)).as("row %d has two results", i).isFalse();
        seen.set(i);
        assertThat(result.getError()).as("row %d", i).isNull();
        OrtSession session = sessions.computeIfAbsent(result.getModelVersion(), v -> open(env, index, v, options));
        float[] expected = direct(env, session, rows[i]);
        assertThat(result.getOutputs()).hasSize(1);
        assertThat(result.getOutputs().get(0).getShape()).containsExactly(1L, (long) DemoMlp.OUTPUT_SIZE);
        ByteBuffer data = result.getOutputs().get(0).getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int k = 0; k < DemoMlp.OUTPUT_SIZE; k++) {
          float got = data.getFloat();
          worst = Math.max(worst, Math.abs(got - expected[k]));
          assertThat(got).as("row %d output %d", i, k).isCloseTo(expected[k], within(1e-5f));
        }
      }
      log.info("{} rows, each with one result; largest difference from a direct run of the row alone: {}", ROWS, worst);
    } finally {
      for (OrtSession s : sessions.values()) {
        s.close();
      }
    }
    assertThat(results).isEqualTo(ROWS);
    assertThat(seen.cardinality()).isEqualTo(ROWS);
  }

  private static OrtSession open(OrtEnvironment env, RepositoryIndex index, String version, OrtSession.SessionOptions options) {
    try {
      return env.createSession(index.models().get(DemoMlp.MODEL_NAME).version(version).orElseThrow().modelFile().toString(), options);
    } catch (Exception e) {
      throw new IllegalStateException("cannot open version " + version + " of " + DemoMlp.MODEL_NAME, e);
    }
  }

  private static float[] direct(OrtEnvironment env, OrtSession session, float[] row) throws Exception {
    try (OnnxTensor x = OnnxTensor.createTensor(env, new float[][] {row});
         OrtSession.Result y = session.run(Map.of(DemoMlp.INPUT, x))) {
      return ((float[][]) y.get(0).getValue())[0];
    }
  }

  private Process startChild(String what, Topics topics, int incarnation, List<String> settings) throws Exception {
    List<String> args = new ArrayList<>(List.of(what));
    args.addAll(settings);
    Process p = ChildJvm.start(ChildMain.class, "384m",
        Path.of("target", "packkill", topics.prefix() + "-" + what + "-" + incarnation + ".log"), args);
    processes.add(p);
    return p;
  }

  private int done(String base, String id) {
    try {
      return JSON.readTree(body(base + "/v2/jobs/" + id)).get("done").asInt();
    } catch (Exception e) {
      return -1; // starting, or not the runner yet
    }
  }

  private String body(String url) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }

  private int status(String url) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (Exception e) {
      return -1; // down or starting
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static long resultsOnTopic(Topics topics) throws Exception {
    try (var admin = KafkaFixture.admin()) {
      var tp = new org.apache.kafka.common.TopicPartition(topics.jobItems(), 0);
      return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get().get(tp).offset();
    }
  }
}

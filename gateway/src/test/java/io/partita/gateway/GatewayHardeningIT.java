package io.partita.gateway;

import static io.partita.gateway.TestHttp.get;
import static io.partita.gateway.TestHttp.inferBody;
import static io.partita.gateway.TestHttp.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.BatchJob;
import io.partita.avro.InferenceReply;
import io.partita.avro.JobItem;
import io.partita.avro.JobStatus;
import io.partita.avro.Tensor;
import io.partita.common.KafkaHeaders;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.health.Fatal;
import io.partita.common.health.LoopGuard;
import io.partita.common.serde.Codecs;
import io.partita.gateway.health.GatewayLoops;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.avro.SchemaNormalization;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Hardening, the gateway's side: what a client (or anyone who can write to the gateway's reply
 * topic) sends must not stop serving, leak another key's jobs, flood the log or echo huge input.
 * Against a real broker, a gateway with API keys, and a stand-in worker ({@link FakeWorker}) that
 * never answers requests whose id starts with {@code hold-}.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayHardeningIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String K1 = "k1-key-0001";
  private static final String K2 = "k2-key-0002";
  private static final String ALL = "all-key-0003";

  @TempDir static Path repo;
  private Topics topics;
  private Gateway gateway;
  private FakeWorker worker;
  private String gatewayId;
  private final List<Integer> halts = new CopyOnWriteArrayList<>();
  private Fatal.Halter previousHalter;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeAll
  void start() throws Exception {
    // This branch alone has no bound on Avro's allocations yet: a huge count may be a real
    // OutOfMemoryError here, which must not end the test JVM. The gateway's own handling is the same.
    previousHalter = Fatal.setHalterForTests(halts::add);
    logs.start();
    ((Logger) LoggerFactory.getLogger("io.partita")).addAppender(logs);
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("hardening"));
    gatewayId = "hardening-" + System.nanoTime();
    gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.id", gatewayId,
        "gateway.routing", "any", // no planner in this test: produce without routes
        "gateway.api-keys", K1 + ":demo-a," + K2 + ":demo-a|demo," + ALL + ":*",
        "gateway.timeout.ms", "20000"))));
    gateway.start();
    worker = new FakeWorker(topics, DemoMlp.SERVICE_MODELS);
  }

  @AfterAll
  void stop() throws Exception {
    if (worker != null) worker.close();
    if (gateway != null) gateway.close();
    ((Logger) LoggerFactory.getLogger("io.partita")).detachAppender(logs);
    Fatal.setHalterForTests(previousHalter);
  }

  private long produced() throws Exception {
    return TestHttp.produced(topics, DemoMlp.SERVICE_MODELS);
  }

  private static String body() {
    return inferBody(1, 2, 3, 4, 5, 6, 7, 8);
  }

  private CompletableFuture<HttpResponse<String>> heldCall(String id) {
    String slow = "{\"parameters\":{\"timeout_ms\":15000}," + body().substring(1);
    return TestHttp.CLIENT.sendAsync(TestHttp.request(gateway, "/v2/models/demo/infer").POST(HttpRequest.BodyPublishers.ofString(slow))
        .header("X-API-Key", ALL).header("X-Request-Id", id).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** An InferenceReply in single-object encoding whose outputs array declares two billion elements in 32 bytes or so. */
  static byte[] replyWithHugeCount() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(0xC3);
    out.write(0x01);
    out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)
        .putLong(SchemaNormalization.parsingFingerprint64(InferenceReply.getClassSchema())).array());
    writeString(out, "x");          // id
    writeString(out, "demo");       // serviceModel
    out.write(0);                   // modelVersion: null
    writeLong(out, 2_000_000_000L); // outputs: a block of two billion tensors, none of them sent
    return out.toByteArray();
  }

  private static void writeString(ByteArrayOutputStream out, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    writeLong(out, b.length);
    out.writeBytes(b);
  }

  private static void writeLong(ByteArrayOutputStream out, long v) {
    long z = (v << 1) ^ (v >> 63);
    while ((z & ~0x7FL) != 0) {
      out.write((int) ((z & 0x7F) | 0x80));
      z >>>= 7;
    }
    out.write((int) z);
  }

  private void writeReply(KafkaProducer<String, byte[]> producer, String correlationId, byte[] value) throws Exception {
    ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.replies(gatewayId), correlationId, value);
    if (correlationId != null) {
      KafkaHeaders.put(record.headers(), KafkaHeaders.CORRELATION_ID, correlationId);
    }
    producer.send(record).get();
  }

  private LoopGuard guard(String loop) {
    return gateway.loops().guards().stream().filter(g -> g.name().equals(loop)).findFirst().orElseThrow();
  }

  @Test
  void shouldAnswerTheCallsWhoseRepliesArePoisonedAndKeepServingTheNextOnes() throws Exception {
    // Given two calls in flight that no worker will answer
    String huge = "hold-poison-huge-" + System.nanoTime();
    String garbage = "hold-poison-garbage-" + System.nanoTime();
    CompletableFuture<HttpResponse<String>> first = heldCall(huge);
    CompletableFuture<HttpResponse<String>> second = heldCall(garbage);
    await().atMost(Duration.ofSeconds(10)).until(() -> worker.partitionOf(huge) != null && worker.partitionOf(garbage) != null);
    long skippedBefore = guard(GatewayLoops.REPLIES).skippedCount();

    // When poisoned replies with their correlation ids (and some nobody waits for) reach the reply topic
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      writeReply(producer, null, new byte[] {1, 2, 3});
      writeReply(producer, huge, replyWithHugeCount());
      writeReply(producer, garbage, "not avro at all".getBytes(StandardCharsets.UTF_8));
      writeReply(producer, "nobody-waits", replyWithHugeCount());
    }

    // Then each of those calls is answered at once with an error, not at its deadline
    for (CompletableFuture<HttpResponse<String>> call : List.of(first, second)) {
      HttpResponse<String> response = call.get();
      assertThat(response.statusCode()).as(response.body()).isEqualTo(500);
      assertThat(JSON.readTree(response.body()).get("error").asText()).startsWith("the reply to this request could not be read");
    }
    // And the reply loop lives on: the next calls are answered
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> ok = post(gateway, "/v2/models/demo/infer", body(), "X-API-Key", ALL);
      assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    }
    assertThat(guard(GatewayLoops.REPLIES).loop().isReady()).isTrue();
    assertThat(guard(GatewayLoops.REPLIES).skippedCount() - skippedBefore).isGreaterThanOrEqualTo(2);
    assertThat(get(gateway, "/v2/health/ready").statusCode()).isEqualTo(200);
    assertThat(get(gateway, "/metrics").body()).contains("partita_gateway_loop_alive{loop=\"gateway-replies\"} 1.0")
        .contains("partita_gateway_loop_records_skipped_total{loop=\"gateway-replies\"}");
  }

  @Test
  void shouldAnswer400NamingTheLimitWhenAnInferBodyNestsTooDeep() throws Exception {
    long before = produced();
    HttpResponse<String> response = post(gateway, "/v2/models/demo/infer", "[".repeat(1001), "X-API-Key", ALL);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    assertThat(JSON.readTree(response.body()).get("error").asText())
        .isEqualTo("body: JSON nested deeper than the limit of 64 levels (gateway.json.max.depth)");
    assertThat(produced()).isEqualTo(before);
  }

  @Test
  void shouldGiveAJobLineThatNestsTooDeepA400ResultNamingTheLimit() throws Exception {
    HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo", "[".repeat(1001) + "\n", "X-API-Key", ALL);
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    String id = JSON.readTree(created.body()).get("id").asText();
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
        JSON.readTree(get(gateway, "/v2/jobs/" + id, "X-API-Key", ALL).body()).get("state").asText().equals("DONE"));
    List<JsonNode> results = JobLinesFixture.parseLines(get(gateway, "/v2/jobs/" + id + "/results", "X-API-Key", ALL).body());
    assertThat(results).hasSize(1);
    assertThat(results.get(0).get("status").asInt()).isEqualTo(400);
    assertThat(results.get(0).get("error").asText()).contains("gateway.json.max.depth");
  }

  @Test
  void shouldLogAtDebugAndCountCancelledWhenTheClientGoesAwayMidBody() throws Exception {
    logs.list.clear();
    long errorsBefore = count("infer", "error");
    try (Socket socket = new Socket("localhost", gateway.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v2/models/demo/infer HTTP/1.1\r\nHost: localhost\r\nX-API-Key: " + ALL
          + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"inputs\":[{\"name\":").getBytes(StandardCharsets.US_ASCII));
      out.flush();
    } // closed with 950 bytes of the body never sent
    await().atMost(Duration.ofSeconds(10)).until(() -> get(gateway, "/metrics").body().lines().anyMatch(l ->
        l.startsWith("partita_gateway_requests_seconds_count{") && l.contains("endpoint=\"infer\"") && l.contains("outcome=\"cancelled\"")));
    assertThat(count("infer", "error")).isEqualTo(errorsBefore);
    assertThat(logs.list).filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.ERROR)).isEmpty();
  }

  /** The count of HTTP calls to this endpoint with this outcome, summed over models, from /metrics. */
  private long count(String endpoint, String outcome) throws Exception {
    return get(gateway, "/metrics").body().lines().filter(l -> l.startsWith("partita_gateway_requests_seconds_count{")
        && l.contains("endpoint=\"" + endpoint + "\"") && l.contains("outcome=\"" + outcome + "\""))
        .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
  }

  @Test
  void shouldShowAJobOnlyToTheKeyThatSubmittedItAndToKeysAllowedEveryModel() throws Exception {
    // Given a job K2 submitted (K1 may use the same model)
    HttpResponse<String> created = post(gateway, "/v2/jobs?model=demo-a", JobLinesFixture.lines(DemoMlp.sampleInput(2, 4)), "X-API-Key", K2);
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    String id = JSON.readTree(created.body()).get("id").asText();
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
        JSON.readTree(get(gateway, "/v2/jobs/" + id, "X-API-Key", K2).body()).get("state").asText().equals("DONE"));

    // Then K1 cannot see, list, read or cancel it: 404, as for a job that does not exist
    for (HttpResponse<String> refused : List.of(
        get(gateway, "/v2/jobs/" + id, "X-API-Key", K1),
        get(gateway, "/v2/jobs/" + id + "/results", "X-API-Key", K1),
        TestHttp.send(TestHttp.request(gateway, "/v2/jobs/" + id).DELETE().header("X-API-Key", K1)))) {
      assertThat(refused.statusCode()).as(refused.body()).isEqualTo(404);
      assertThat(refused.body()).contains("job '" + id + "' is not known");
    }
    assertThat(JSON.readTree(get(gateway, "/v2/jobs", "X-API-Key", K1).body()).get("jobs").findValuesAsText("id")).doesNotContain(id);

    // And K2 and a key allowed every model can
    assertThat(JSON.readTree(get(gateway, "/v2/jobs", "X-API-Key", K2).body()).get("jobs").findValuesAsText("id")).contains(id);
    assertThat(JSON.readTree(get(gateway, "/v2/jobs", "X-API-Key", ALL).body()).get("jobs").findValuesAsText("id")).contains(id);
    assertThat(get(gateway, "/v2/jobs/" + id, "X-API-Key", ALL).statusCode()).isEqualTo(200);
    assertThat(get(gateway, "/v2/jobs/" + id + "/results", "X-API-Key", K2).statusCode()).isEqualTo(200);
    assertThat(get(gateway, "/v2/jobs/" + id + "/results", "X-API-Key", ALL).statusCode()).isEqualTo(200);
  }

  @Test
  void shouldAnswer400NamingTheElementWhenAnFp32ValueIsOutOfRange() throws Exception {
    long before = produced();
    HttpResponse<String> response = post(gateway, "/v2/models/demo/infer",
        "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,1e39,5,6,7,8]}]}", "X-API-Key", ALL);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    assertThat(JSON.readTree(response.body()).get("error").asText()).startsWith("input 'input'.data[3]: 1.0E39 is out of the FP32 range");
    assertThat(produced()).isEqualTo(before);
  }

  @Test
  void shouldCutAVeryLongModelNameInTheAnswer() throws Exception {
    // The longest name a request line can carry: the server refuses request lines over 8 KiB (below)
    String name = "m".repeat(7_000);
    for (String key : List.of(ALL, K1)) {
      HttpResponse<String> response = get(gateway, "/v2/models/" + name + "/ready", "X-API-Key", key);
      assertThat(response.statusCode()).isEqualTo(key.equals(ALL) ? 404 : 403);
      assertThat(response.body()).hasSizeLessThan(1000).contains("...(7000 characters)");
    }
    HttpResponse<String> infer = post(gateway, "/v2/models/" + name + "/infer", body(), "X-API-Key", ALL);
    assertThat(infer.statusCode()).isEqualTo(404);
    assertThat(infer.body()).hasSizeLessThan(1000);
  }

  @Test
  void shouldRefuseARequestLineOver8KiBWith414() throws Exception {
    HttpClient http11 = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpResponse<String> response = http11.send(HttpRequest.newBuilder(
            URI.create("http://localhost:" + gateway.port() + "/v2/models/" + "m".repeat(100_000) + "/ready"))
        .header("X-API-Key", ALL).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(414);
    assertThat(response.body()).hasSizeLessThan(1000);
    assertThat(get(gateway, "/v2/health/live").statusCode()).isEqualTo(200);
  }

  @Test
  void shouldRunAJobPastAPoisonedChunkWhileAnotherJobsStatusIsPoisoned() throws Exception {
    // Given, written straight to Kafka: a job status no runner could run (a negative total), older
    // than everything else, and a good job whose input starts with garbage and a chunk outside the job
    String jobId = "job-poison-" + System.nanoTime();
    Codecs codecs = Codecs.singleObject();
    JobItem item = JobItem.newBuilder().setClientId(null).setOutputs(List.of()).setError(null).setInputs(List.of(
        Tensor.newBuilder().setName("input").setDatatype("FP32").setShape(List.of(1L, 8L))
            .setData(ByteBuffer.wrap(GatewayLimitsIT.floats(1, 2, 3, 4, 5, 6, 7, 8))).build())).build();
    BatchJob good = BatchJob.newBuilder().setJobId(jobId).setServiceModel("demo").setVersion(null).setChunk(0).setFirstIndex(0)
        .setItems(List.of(item, item)).build();
    BatchJob outside = BatchJob.newBuilder(good).setFirstIndex(-5).build();
    JobStatus status = JobStatus.newBuilder().setJobId(jobId).setServiceModel("demo").setVersion(null).setState("QUEUED")
        .setTotal(2).setDone(0).setFailed(0).setChunks(1).setInputOffset(0).setResultsOffset(0)
        .setCreatedAt(System.currentTimeMillis()).setStartedAt(0).setUpdatedAt(System.currentTimeMillis())
        .setRatePerSecond(0).setRunner(null).setMessage(null).build();
    JobStatus poisoned = JobStatus.newBuilder(status).setJobId(jobId + "-bad").setTotal(-1).setCreatedAt(1).setUpdatedAt(1).build();
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      long first = producer.send(new ProducerRecord<>(topics.jobs(), 0, jobId, "garbage".getBytes(StandardCharsets.UTF_8))).get().offset();
      producer.send(new ProducerRecord<>(topics.jobs(), 0, jobId, codecs.codec(BatchJob.class).encode(topics.jobs(), outside))).get();
      producer.send(new ProducerRecord<>(topics.jobs(), 0, jobId, codecs.codec(BatchJob.class).encode(topics.jobs(), good))).get();
      producer.send(new ProducerRecord<>(topics.jobStatus(), poisoned.getJobId(),
          codecs.codec(JobStatus.class).encode(topics.jobStatus(), poisoned))).get();
      JobStatus queued = JobStatus.newBuilder(status).setInputOffset(first).build();
      producer.send(new ProducerRecord<>(topics.jobStatus(), jobId, codecs.codec(JobStatus.class).encode(topics.jobStatus(), queued))).get();
    }

    // Then the good job runs to its end and every item has its result; the bad status is not a job
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
      HttpResponse<String> r = get(gateway, "/v2/jobs/" + jobId, "X-API-Key", ALL);
      return r.statusCode() == 200 && JSON.readTree(r.body()).get("state").asText().equals("DONE");
    });
    List<JsonNode> results = JobLinesFixture.parseLines(get(gateway, "/v2/jobs/" + jobId + "/results", "X-API-Key", ALL).body());
    assertThat(results).hasSize(2).allSatisfy(r -> assertThat(r.has("error")).as(r.toString()).isFalse());
    assertThat(get(gateway, "/v2/jobs/" + poisoned.getJobId(), "X-API-Key", ALL).statusCode()).isEqualTo(404);
    assertThat(guard(GatewayLoops.JOB_STATUS).skippedCount()).isGreaterThanOrEqualTo(1);
    assertThat(guard(GatewayLoops.JOB_LEADER).skippedCount()).isGreaterThanOrEqualTo(2);
  }

  @Test
  void shouldAnswer503NamingADeadLoop() throws Exception {
    // A gateway of its own, so the other tests keep a live one
    Topics own = new Topics(KafkaFixture.uniquePrefix("dead-loop"));
    try (Gateway g = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", own.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any",
        "gateway.jobs.enabled", "false",
        "gateway.demand.interval.ms", "0"))))) {
      g.start();
      assertThat(get(g, "/v2/health/ready").statusCode()).isEqualTo(200);
      assertThat(get(g, "/v2/models/demo/ready").statusCode()).isEqualTo(200);

      g.loops().guards().stream().filter(l -> l.name().equals(GatewayLoops.REPLIES)).findFirst().orElseThrow()
          .died(new IllegalStateException("the reply consumer is gone"));

      HttpResponse<String> ready = get(g, "/v2/health/ready");
      assertThat(ready.statusCode()).isEqualTo(503);
      JsonNode body = JSON.readTree(ready.body());
      assertThat(body.get("ready").asBoolean()).isFalse();
      assertThat(body.get("reason").asText()).isEqualTo("loop 'gateway-replies' died: IllegalStateException: the reply consumer is gone");
      HttpResponse<String> model = get(g, "/v2/models/demo/ready");
      assertThat(model.statusCode()).isEqualTo(503);
      assertThat(model.body()).contains("gateway-replies");
      assertThat(get(g, "/metrics").body()).contains("partita_gateway_loop_alive{loop=\"gateway-replies\"} 0.0");
    }
  }
}

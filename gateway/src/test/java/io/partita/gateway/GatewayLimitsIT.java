package io.partita.gateway;

import static io.partita.gateway.TestHttp.get;
import static io.partita.gateway.TestHttp.inferBody;
import static io.partita.gateway.TestHttp.post;
import static io.partita.gateway.TestHttp.produced;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Limits, keys and error mapping, against a gateway with API keys, a two-request in-flight limit
 * and a 2 KiB body limit, and a stand-in worker ({@link FakeWorker}) that answers what a test asks.
 * Every refusal is checked to have produced nothing.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayLimitsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ALL = "all-key-0001";
  private static final String DEMO_ONLY = "demo-key-001";

  @TempDir static Path repo;
  private Topics topics;
  private Gateway gateway;
  private FakeWorker worker;

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("limits"));
    gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "gateway.api-keys", ALL + ":*," + DEMO_ONLY + ":demo",
        "gateway.max.in.flight", "2",
        "gateway.max.body.bytes", "2048",
        "gateway.timeout.ms", "20000"))));
    gateway.start();
    worker = new FakeWorker(topics, DemoMlp.SERVICE_MODELS);
  }

  @AfterAll
  void stop() throws Exception {
    if (worker != null) worker.close();
    if (gateway != null) gateway.close();
  }

  private long produced() throws Exception {
    return TestHttp.produced(topics, DemoMlp.SERVICE_MODELS);
  }

  private static String body() {
    return inferBody(1, 2, 3, 4, 5, 6, 7, 8);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "no key|/v2/models/demo/infer|X-Nothing|x|401|an API key is required",
      "unknown key|/v2/models/demo/infer|X-API-Key|not-a-key-99|403|the API key is not known",
      "unknown bearer|/v2/models/demo/infer|Authorization|Bearer not-a-key-99|403|the API key is not known",
      "key not allowed for the model|/v2/models/demo-a/infer|Authorization|Bearer " + DEMO_ONLY + "|403|may not use model 'demo-a'",
      "key not allowed for an unknown model|/v2/models/nope/infer|X-API-Key|" + DEMO_ONLY + "|403|may not use model 'nope'",
      "unknown model with an all-models key|/v2/models/nope/infer|X-API-Key|" + ALL + "|404|model 'nope' is not known",
      "no key for a job|/v2/jobs?model=demo|X-Nothing|x|401|an API key is required",
      "job for a model the key may not use|/v2/jobs?model=demo-b|X-API-Key|" + DEMO_ONLY + "|403|may not use model 'demo-b'",
  })
  void shouldRefuseMissingUnknownAndNotAllowedKeysBeforeProducing(String name, String path, String header, String value, int status, String message) throws Exception {
    long before = produced();
    HttpResponse<String> response = post(gateway, path, body(), header, value);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(JSON.readTree(response.body()).get("error").asText()).contains(message);
    assertThat(produced()).isEqualTo(before);
  }

  @Test
  void shouldLetAnAllowedKeyThroughAndKeepHealthAndMetricsOpen() throws Exception {
    HttpResponse<String> ok = post(gateway, "/v2/models/demo/infer", body(), "Authorization", "Bearer " + DEMO_ONLY);
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    assertThat(get(gateway, "/v2/models/demo", "X-API-Key", DEMO_ONLY).statusCode()).isEqualTo(200);
    assertThat(get(gateway, "/v2/models/demo").statusCode()).isEqualTo(401);
    assertThat(get(gateway, "/v2/health/live").statusCode()).isEqualTo(200);
    assertThat(get(gateway, "/v2/health/ready").statusCode()).isEqualTo(200);
    JsonNode listed = JSON.readTree(get(gateway, "/v2/models", "X-API-Key", DEMO_ONLY).body());
    assertThat(listed.get("models")).hasSize(1);
    String metrics = get(gateway, "/metrics").body();
    assertThat(metrics.lines().filter(l -> l.startsWith("partita_gateway_requests_seconds_count{")
        && l.contains("endpoint=\"infer\"") && l.contains("model=\"demo\"") && l.contains("outcome=\"ok\"")))
        .as(metrics).hasSize(1);
    assertThat(metrics).contains("outcome=\"unauthorized\"").contains("partita_gateway_in_flight{kind=\"online\"}");
  }

  @Test
  void shouldAnswer413ForABodyOverTheLimitBeforeProducing() throws Exception {
    long before = produced();
    String big = "{\"inputs\":[],\"pad\":\"" + "x".repeat(3000) + "\"}";
    HttpResponse<String> response = post(gateway, "/v2/models/demo/infer", big, "X-API-Key", ALL);
    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(response.body()).contains("gateway.max.body.bytes");
    assertThat(produced()).isEqualTo(before);
  }

  @Test
  void shouldAnswer400WhenBinaryDataDisagreesWithTheShapeBeforeProducing() throws Exception {
    long before = produced();
    String header = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[4000000000,8],\"parameters\":{\"binary_data_size\":32}}]}";
    HttpResponse<String> response = TestHttp.send(TestHttp.request(gateway, "/v2/models/demo/infer")
        .POST(HttpRequest.BodyPublishers.ofByteArray(concat(header.getBytes(StandardCharsets.UTF_8), floats(1, 2, 3, 4, 5, 6, 7, 8))))
        .header("Inference-Header-Content-Length", String.valueOf(header.length())).header("X-API-Key", ALL));
    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(response.body()).contains("needs 32000000000 FP32 elements");
    assertThat(produced()).isEqualTo(before);
  }

  @Test
  void shouldAnswer429WithRetryAfterOverTheInFlightLimitBeforeProducing() throws Exception {
    long before = produced();
    String slow = "{\"parameters\":{\"timeout_ms\":4000}," + body().substring(1);
    List<CompletableFuture<HttpResponse<String>>> held = List.of(1, 2).stream().map(i -> TestHttp.CLIENT.sendAsync(
        TestHttp.request(gateway, "/v2/models/demo/infer").POST(HttpRequest.BodyPublishers.ofString(slow))
            .header("X-API-Key", ALL).header("X-Request-Id", "hold-" + i + "-" + System.nanoTime()).build(),
        HttpResponse.BodyHandlers.ofString())).toList();
    await().atMost(Duration.ofSeconds(10)).until(() -> produced() == before + 2);
    HttpResponse<String> refused = post(gateway, "/v2/models/demo/infer", body(), "X-API-Key", ALL);
    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).contains("1");
    assertThat(produced()).isEqualTo(before + 2);
    for (CompletableFuture<HttpResponse<String>> h : held) {
      assertThat(h.get().statusCode()).isEqualTo(504);
    }
    assertThat(post(gateway, "/v2/models/demo/infer", body(), "X-API-Key", ALL).statusCode()).isEqualTo(200);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({"BAD_INPUT,400", "NOT_FOUND,404", "NOT_READY,503", "DEADLINE_EXCEEDED,504", "OVERLOADED,429", "MODEL_ERROR,500", "UNKNOWN,500"})
  void shouldMapErrorRepliesToStatusesWithTheWorkersMessageButNoPathOrTrace(String code, int status) throws Exception {
    HttpResponse<String> response = post(gateway, "/v2/models/demo/infer", body(),
        "X-API-Key", ALL, "X-Request-Id", "code-" + code + "-" + System.nanoTime());
    assertThat(response.statusCode()).isEqualTo(status);
    String error = JSON.readTree(response.body()).get("error").asText();
    assertThat(error).isEqualTo("failed at <path>");
    assertThat(response.body()).doesNotContain("/opt").doesNotContain("OrtSession");
  }

  @Test
  void shouldCarryBinaryTensorsBothWays() throws Exception {
    byte[] data = floats(1.5f, -2, 3, 4, 5, 6, 7, 8.25f);
    String header = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"parameters\":{\"binary_data_size\":32}}],"
        + "\"outputs\":[{\"name\":\"output\",\"parameters\":{\"binary_data\":true}}]}";
    HttpResponse<byte[]> response = TestHttp.CLIENT.send(TestHttp.request(gateway, "/v2/models/demo/infer")
        .POST(HttpRequest.BodyPublishers.ofByteArray(concat(header.getBytes(StandardCharsets.UTF_8), data)))
        .header("Inference-Header-Content-Length", String.valueOf(header.length()))
        .header("Content-Type", "application/octet-stream").header("X-API-Key", ALL).build(), HttpResponse.BodyHandlers.ofByteArray());
    assertThat(response.statusCode()).isEqualTo(200);
    int json = Integer.parseInt(response.headers().firstValue("Inference-Header-Content-Length").orElseThrow());
    JsonNode head = JSON.readTree(Arrays.copyOfRange(response.body(), 0, json));
    assertThat(head.get("outputs").get(0).get("parameters").get("binary_data_size").asInt()).isEqualTo(32);
    assertThat(Arrays.copyOfRange(response.body(), json, response.body().length)).isEqualTo(data); // the stand-in echoes
  }

  @Test
  void shouldAnswerWrongMethodsAndUnknownPathsWithoutDetails() throws Exception {
    HttpResponse<String> wrong = get(gateway, "/v2/models/demo/infer", "X-API-Key", ALL);
    assertThat(wrong.statusCode()).isEqualTo(405);
    HttpResponse<String> none = get(gateway, "/etc/passwd");
    assertThat(none.statusCode()).isEqualTo(404);
    assertThat(none.body()).doesNotContain("Exception").doesNotContain(repo.toString());
  }

  static byte[] floats(float... values) {
    ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : values) {
      b.putFloat(v);
    }
    return b.array();
  }

  static byte[] concat(byte[] a, byte[] b) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(a);
    out.writeBytes(b);
    return out.toByteArray();
  }
}

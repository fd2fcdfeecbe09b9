package io.partita.gateway;

import static io.partita.gateway.JobLinesFixture.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Online calls batched on the wire, against a real broker and a stand-in worker ({@link FakeWorker})
 * that echoes each request's rows back and refuses a whole request when one row is bad. A first call
 * the worker never answers keeps a request of the model in flight, so the calls that follow are
 * collected into packs (of at most {@code gateway.coalesce.max.rows}) instead of going at once.
 */
@ExtendWith(KafkaFixture.class)
class CoalescedCallsIT {
  private static final int CALLS = 64;
  private static final int MAX_ROWS = 16;
  private static final String MODEL = "demo";
  @TempDir Path repo;

  @Test
  void shouldPackConcurrentCallsAndAnswerEachWithItsOwnRowsAndFailOnlyTheBadOne() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("coalesce"));
    ExecutorService clients = Executors.newFixedThreadPool(CALLS);
    try (FakeWorker worker = new FakeWorker(topics, DemoMlp.SERVICE_MODELS);
         Gateway gateway = gateway(topics)) {
      gateway.start();
      // Given a request of the model in flight that is never answered (it fails alone at its deadline)
      float[] heldRow = DemoMlp.sampleInput(1, 5)[0];
      Future<HttpResponse<String>> held = clients.submit(() -> TestHttp.post(gateway, "/v2/models/" + MODEL + "/infer",
          withTimeout(TestHttp.inferBody(heldRow), 10_000), "X-Request-Id", "hold-1"));
      await().atMost(Duration.ofSeconds(30))
          .until(() -> worker.partitionOf("hold-1") != null);

      // When 64 calls with different rows come at once
      float[][] rows = DemoMlp.sampleInput(CALLS, 11);
      List<HttpResponse<String>> answers = callAll(gateway, clients, rows, "good-");

      // Then each got its own row back, and they went out in fewer records than calls
      for (int i = 0; i < CALLS; i++) {
        assertOwnRow(answers.get(i), "good-" + i, rows[i]);
      }
      List<Long> records = worker.rowsPerRequest();
      assertThat(records.stream().mapToLong(Long::longValue).sum()).isEqualTo(CALLS);
      assertThat(records).as("rows per request record").hasSizeLessThan(CALLS).allMatch(r -> r <= MAX_ROWS);
      String metrics = TestHttp.get(gateway, "/metrics").body();
      assertThat(metric(metrics, "partita_gateway_online_request_calls_count")).isEqualTo(records.size() + 1.0); // + the held call
      assertThat(metric(metrics, "partita_gateway_online_request_calls_sum")).isEqualTo(CALLS + 1.0);

      // When a round of 32 holds one bad row, the pack holding it is refused and sent again call by call
      float[][] second = DemoMlp.sampleInput(32, 12);
      int bad = 5;
      second[bad][3] = FakeWorker.POISON;
      List<HttpResponse<String>> mixed = callAll(gateway, clients, second, "mixed-");

      // Then only the bad call fails, and every other call still gets its own row
      for (int i = 0; i < second.length; i++) {
        if (i == bad) {
          assertThat(mixed.get(i).statusCode()).as(mixed.get(i).body()).isEqualTo(400);
          assertThat(mixed.get(i).body()).contains("a row holds");
        } else {
          assertOwnRow(mixed.get(i), "mixed-" + i, second[i]);
        }
      }
      assertThat(metric(TestHttp.get(gateway, "/metrics").body(), "partita_gateway_online_packs_split_total")).isGreaterThanOrEqualTo(1.0);

      // When a call with a short deadline waits in an open pack with two others
      int before = worker.rowsPerRequest().size();
      float[][] third = DemoMlp.sampleInput(3, 13);
      List<Future<HttpResponse<String>>> waiting = new ArrayList<>();
      for (int i = 0; i < third.length; i++) {
        String body = i == 0 ? withTimeout(TestHttp.inferBody(third[i]), 300) : TestHttp.inferBody(third[i]);
        String id = "third-" + i;
        waiting.add(clients.submit(() -> TestHttp.post(gateway, "/v2/models/" + MODEL + "/infer", body, "X-Request-Id", id)));
      }
      // Then it fails at its own deadline, and the pack leaves at its window without it
      HttpResponse<String> expired = waiting.get(0).get(60, TimeUnit.SECONDS);
      assertThat(expired.statusCode()).as(expired.body()).isEqualTo(504);
      assertThat(expired.body()).contains("(300 ms)");
      for (int i = 1; i < third.length; i++) {
        assertOwnRow(waiting.get(i).get(60, TimeUnit.SECONDS), "third-" + i, third[i]);
      }
      assertThat(worker.rowsPerRequest().subList(before, worker.rowsPerRequest().size())).containsExactly(2L);

      // And the held call failed at its own deadline, alone
      HttpResponse<String> heldAnswer = held.get(60, TimeUnit.SECONDS);
      assertThat(heldAnswer.statusCode()).as(heldAnswer.body()).isEqualTo(504);
    } finally {
      clients.shutdownNow();
    }
  }

  @Test
  void shouldPackCallsThatAreStreamsOfOneHttp2ConnectionAndAnswerEachOnItsOwnStream() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("coalesce-h2"));
    Vertx vertx = Vertx.vertx();
    try (FakeWorker worker = new FakeWorker(topics, DemoMlp.SERVICE_MODELS);
         Gateway gateway = gateway(topics)) {
      gateway.start();
      // HTTP/2 cleartext with prior knowledge, at most one connection: every call is a stream of it
      HttpClientAgent h2 = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
          .setHttp2ClearTextUpgrade(false).setDefaultHost("localhost").setDefaultPort(gateway.port()), new PoolOptions().setHttp2MaxSize(1));
      // Given a request of the model in flight that is never answered
      CompletableFuture<StreamAnswer> held = post(h2, withTimeout(TestHttp.inferBody(DemoMlp.sampleInput(1, 5)[0]), 10_000), "hold-1");
      await().atMost(Duration.ofSeconds(30)).until(() -> worker.partitionOf("hold-1") != null);

      // When 64 calls with different rows come at once, as 64 streams of that connection
      float[][] rows = DemoMlp.sampleInput(CALLS, 21);
      List<CompletableFuture<StreamAnswer>> calls = new ArrayList<>();
      for (int i = 0; i < CALLS; i++) {
        calls.add(post(h2, TestHttp.inferBody(rows[i]), "stream-" + i));
      }

      // Then each stream got its own row back, on the one connection, in fewer request records than calls
      Set<HttpConnection> connections = new HashSet<>();
      for (int i = 0; i < CALLS; i++) {
        StreamAnswer answer = calls.get(i).get(60, TimeUnit.SECONDS);
        assertThat(answer.version()).isEqualTo(HttpVersion.HTTP_2);
        assertOwnRow(answer.status(), answer.body(), "stream-" + i, rows[i]);
        connections.add(answer.connection());
      }
      assertThat(connections).hasSize(1);
      List<Long> records = worker.rowsPerRequest();
      assertThat(records.stream().mapToLong(Long::longValue).sum()).isEqualTo(CALLS);
      assertThat(records).as("rows per request record").hasSizeLessThan(CALLS).allMatch(r -> r <= MAX_ROWS);

      // And the held call failed at its own deadline, alone, on its own stream
      StreamAnswer heldAnswer = held.get(60, TimeUnit.SECONDS);
      assertThat(heldAnswer.status()).as(heldAnswer.body()).isEqualTo(504);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** What one HTTP/2 stream was answered. */
  private record StreamAnswer(int status, String body, HttpVersion version, HttpConnection connection) {}

  private static CompletableFuture<StreamAnswer> post(HttpClientAgent h2, String body, String id) {
    return h2.request(new RequestOptions().setMethod(HttpMethod.POST).setURI("/v2/models/" + MODEL + "/infer")
            .putHeader("content-type", "application/json").putHeader("x-request-id", id))
        .compose(request -> request.send(body))
        .compose(response -> response.body().map(answer -> new StreamAnswer(response.statusCode(), answer.toString(),
            response.version(), response.request().connection())))
        .toCompletionStage().toCompletableFuture();
  }

  /** A gateway on its own topics, packing up to {@link #MAX_ROWS} rows with a window long enough for a round of calls. */
  private Gateway gateway(Topics topics) {
    return new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any",
        "gateway.coalesce.max.rows", Integer.toString(MAX_ROWS),
        "gateway.coalesce.window.us", "1000000", // long enough for every call of a round to arrive
        "gateway.dashboard.enabled", "false"))));
  }

  private static List<HttpResponse<String>> callAll(Gateway gateway, ExecutorService clients, float[][] rows, String idPrefix)
      throws Exception {
    List<Future<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < rows.length; i++) {
      String body = TestHttp.inferBody(rows[i]);
      String id = idPrefix + i;
      calls.add(clients.submit(() -> TestHttp.post(gateway, "/v2/models/" + MODEL + "/infer", body, "X-Request-Id", id)));
    }
    List<HttpResponse<String>> answers = new ArrayList<>();
    for (Future<HttpResponse<String>> call : calls) {
      answers.add(call.get(60, TimeUnit.SECONDS));
    }
    return answers;
  }

  private static void assertOwnRow(HttpResponse<String> response, String id, float[] row) throws Exception {
    assertOwnRow(response.statusCode(), response.body(), id, row);
  }

  private static void assertOwnRow(int status, String body, String id, float[] row) throws Exception {
    assertThat(status).as("%s: %s", id, body).isEqualTo(200);
    JsonNode out = JSON.readTree(body);
    assertThat(out.get("id").asText()).isEqualTo(id);
    JsonNode output = out.get("outputs").get(0);
    assertThat(output.get("shape").get(0).asInt()).isEqualTo(1);
    for (int k = 0; k < row.length; k++) {
      assertThat(output.get("data").get(k).floatValue()).as("%s [%d]", id, k).isEqualTo(row[k]);
    }
  }

  private static String withTimeout(String body, long timeoutMs) {
    return "{\"parameters\":{\"timeout_ms\":" + timeoutMs + "}," + body.substring(1);
  }

  /** The value of a series of model demo in the Prometheus text. */
  private static double metric(String text, String name) {
    Matcher m = Pattern.compile("(?m)^" + name + "\\{model=\"" + MODEL + "\",?\\} ([0-9.eE+-]+)$").matcher(text);
    assertThat(m.find()).as("%s{model=%s} in%n%s", name, MODEL, text).isTrue();
    return Double.parseDouble(m.group(1));
  }
}

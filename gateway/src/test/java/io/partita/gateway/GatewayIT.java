package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** HTTP through the gateway, Kafka and a real worker with the demo models. */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();

  @TempDir static Path repo;
  private Topics topics;
  private InferenceWorker worker;
  private Gateway gateway;

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("gateway"));
    Settings settings = Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "worker.threads", "1",
        "gateway.timeout.ms", "20000"));
    worker = new InferenceWorker(WorkerConfig.from(settings));
    worker.start();
    gateway = new Gateway(GatewayConfig.from(settings));
    gateway.start();
  }

  @AfterAll
  void stop() {
    if (gateway != null) gateway.close();
    if (worker != null) worker.close();
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json").build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String inferBody(float[][] x) {
    String data = Arrays.stream(x).map(row -> {
      StringBuilder b = new StringBuilder("[");
      for (int i = 0; i < row.length; i++) b.append(i == 0 ? "" : ",").append(row[i]);
      return b.append("]").toString();
    }).collect(Collectors.joining(",", "[", "]"));
    return "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[" + x.length + ",8],\"data\":" + data + "}]}";
  }

  private long requestsProduced() throws Exception {
    try (Admin admin = KafkaFixture.admin()) {
      long total = 0;
      for (String topic : List.of(topics.requests(DemoMlp.MODEL_NAME))) { // every demo service model shares it
        var partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions();
        Map<TopicPartition, OffsetSpec> ask = partitions.stream()
            .collect(Collectors.toMap(p -> new TopicPartition(topic, p.partition()), p -> OffsetSpec.latest()));
        total += admin.listOffsets(ask).all().get().values().stream().mapToLong(o -> o.offset()).sum();
      }
      return total;
    }
  }

  @Test
  void shouldReturnTheReferenceResultForEveryDemoServiceModelAndVersion() throws Exception {
    float[][] x = DemoMlp.sampleInput(2, 11);
    for (String model : DemoMlp.SERVICE_MODELS) {
      for (String version : DemoMlp.VERSIONS) {
        HttpResponse<String> response = post("/v2/models/" + model + "/versions/" + version + "/infer", inferBody(x));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode out = JSON.readTree(response.body()).get("outputs").get(0);
        assertThat(out.get("shape").toString()).isEqualTo("[2,4]");
        // every answer says where it ran
        JsonNode where = JSON.readTree(response.body()).get("parameters");
        assertThat(where.get("partita_host").asText()).isEqualTo(WorkerConfig.defaultHostId());
        assertThat(worker.slots().slots()).extracting(s -> s.spec().slot()).contains(where.get("partita_slot").asText());
        float[][] expected = DemoMlp.reference(x, DemoMlp.adapterForServiceModel(model).orElse(null), version);
        for (int i = 0; i < 8; i++) {
          assertThat(out.get("data").get(i).floatValue()).as("%s v%s [%d]", model, version, i)
              .isCloseTo(expected[i / 4][i % 4], within(1e-4f));
        }
      }
    }
  }

  @Test
  void shouldEchoTheRequestIdHeader() throws Exception {
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + "/v2/models/demo/infer"))
        .POST(HttpRequest.BodyPublishers.ofString(inferBody(DemoMlp.sampleInput(1, 3)))).header("X-Request-Id", "my-id-42").build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("X-Request-Id")).contains("my-id-42");
    assertThat(JSON.readTree(response.body()).get("id").asText()).isEqualTo("my-id-42");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "unknown model|/v2/models/nope/infer|{\"inputs\":[]}|404|model 'nope' is not known",
      "unknown version|/v2/models/demo/versions/9/infer|{\"inputs\":[]}|404|version '9'",
      "wrong shape|/v2/models/demo/infer|{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,3],\"data\":[1,2,3]}]}|400|input 'input'.shape[1]: expected 8, got 3",
      "wrong datatype|/v2/models/demo/infer|{\"inputs\":[{\"name\":\"input\",\"datatype\":\"INT64\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}|400|input 'input'.datatype: expected FP32, got INT64",
      "data shorter than shape|/v2/models/demo/infer|{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[2,8],\"data\":[1,2,3,4,5,6,7,8]}]}|400|input 'input'.data: shape [2, 8] needs 16 elements, got 8",
      "wrong input name|/v2/models/demo/infer|{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}|400|input 'x': unknown input",
      "not json|/v2/models/demo/infer|{nope|400|body: not valid JSON",
      "no inputs|/v2/models/demo/infer|{}|400|inputs: missing",
  })
  void shouldRefuseBadInputBeforeProducingAnything(String name, String path, String body, int status, String message) throws Exception {
    long before = requestsProduced();
    HttpResponse<String> response = post(path, body);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(JSON.readTree(response.body()).get("error").asText()).contains(message);
    assertThat(requestsProduced()).isEqualTo(before);
  }

  @Test
  void shouldServeMetadataAndHealth() throws Exception {
    assertThat(get("/v2/health/live").statusCode()).isEqualTo(200);
    assertThat(get("/v2/health/ready").statusCode()).isEqualTo(200);
    JsonNode meta = JSON.readTree(get("/v2/models/demo-a").body());
    assertThat(meta.get("versions").toString()).isEqualTo("[\"1\",\"2\"]");
    assertThat(meta.get("inputs").get(0).get("name").asText()).isEqualTo("input");
    assertThat(meta.get("inputs").get(0).get("shape").toString()).isEqualTo("[-1,8]");
    assertThat(get("/v2/models/demo-a/versions/1/ready").statusCode()).isEqualTo(200);
    assertThat(get("/v2/models/nope/ready").statusCode()).isEqualTo(404);
  }
}

package io.partita.gateway.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.serde.Codecs;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.ModelMetadataRequest;
import io.partita.gateway.grpc.proto.ModelMetadataResponse;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A gateway started with no model repository ({@code model.repo} unset): it offers what the
 * catalog topics hold, validates bodies and answers metadata (HTTP and gRPC) from the signatures in
 * the version records, and follows the catalog while it runs. The worker, on its own "host", has
 * the files and answers.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayWithoutRepositoryIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();

  @TempDir static Path repo;
  private Topics topics;
  private RepositoryIndex scanned;
  private InferenceWorker worker;
  private Gateway gateway;
  private ManagedChannel channel;
  private KafkaProducer<String, byte[]> producer;
  private final Codecs codecs = Codecs.singleObject();

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    scanned = ModelRepository.scan(repo);
    topics = new Topics(KafkaFixture.uniquePrefix("catalog-gateway"));
    try (Admin admin = KafkaFixture.admin()) {
      TopicAdmin.ensure(admin, topics.infrastructure(), (short) 1);
    }
    producer = KafkaFixture.producer();
    scanned.models().values().forEach(m -> m.versions().values().forEach(v -> publishVersion(v.model() + "/" + v.version(),
        CatalogRecords.version(v))));
    scanned.serviceModels().values().forEach(s -> publishService(s.name(), CatalogRecords.service(s)));
    producer.flush();

    Map<String, String> common = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "gateway.routing", "any", // no planner in this test: produce without routes
        "gateway.timeout.ms", "20000"));
    Map<String, String> workerSettings = new HashMap<>(common);
    workerSettings.put("model.repo", repo.toString());
    workerSettings.put("worker.threads", "1");
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(workerSettings)));
    worker.start();
    Map<String, String> gatewaySettings = new HashMap<>(common); // no model.repo: the catalog it is
    gatewaySettings.put("http.port", "0");
    gateway = new Gateway(GatewayConfig.from(Settings.of(gatewaySettings)));
    gateway.start();
    channel = NettyChannelBuilder.forAddress("localhost", gateway.grpcPort()).usePlaintext().build();
  }

  @AfterAll
  void stop() throws Exception {
    if (channel != null) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    if (gateway != null) gateway.close();
    if (worker != null) worker.close();
    if (producer != null) producer.close();
  }

  private void publishVersion(String key, ModelVersion v) {
    producer.send(new ProducerRecord<>(topics.catalogModels(), key, v == null ? null : codecs.codec(ModelVersion.class)
        .encode(topics.catalogModels(), v)));
  }

  private void publishService(String key, ServiceModel s) {
    producer.send(new ProducerRecord<>(topics.catalogServices(), key, s == null ? null : codecs.codec(ServiceModel.class)
        .encode(topics.catalogServices(), s)));
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

  private static String body(String shape, String data) {
    return "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":" + shape + ",\"data\":" + data + "}]}";
  }

  @Test
  void shouldServeModelMetadataFromTheCatalogSignatures() throws Exception {
    HttpResponse<String> response = get("/v2/models/demo-a");

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode meta = JSON.readTree(response.body());
    assertThat(meta.get("base_model").asText()).isEqualTo(DemoMlp.MODEL_NAME);
    assertThat(meta.get("versions").toString()).isEqualTo("[\"1\",\"2\"]");
    assertThat(meta.get("inputs").toString()).isEqualTo("[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[-1,8]}]");
    assertThat(meta.get("outputs").toString()).isEqualTo("[{\"name\":\"output\",\"datatype\":\"FP32\",\"shape\":[-1,4]}]");
  }

  @Test
  void shouldServeModelMetadataOverGrpcFromTheCatalog() {
    ModelMetadataResponse meta = GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .modelMetadata(ModelMetadataRequest.newBuilder().setName("demo").setVersion("2").build());

    assertThat(meta.getVersionsList()).containsExactly("2");
    assertThat(meta.getInputs(0).getName()).isEqualTo("input");
    assertThat(meta.getInputs(0).getShapeList()).containsExactly(-1L, 8L);
    assertThat(meta.getOutputs(0).getDatatype()).isEqualTo("FP32");
  }

  @Test
  void shouldAnswer400NamingTheInputWhenTheShapeIsWrong() throws Exception {
    HttpResponse<String> response = post("/v2/models/demo/infer", body("[1,3]", "[1,2,3]"));

    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(response.body()).contains("input 'input'.shape[1]: expected 8, got 3");
  }

  @Test
  void shouldAnswer404ForAModelTheCatalogDoesNotHold() throws Exception {
    HttpResponse<String> response = post("/v2/models/nope/infer", body("[1,8]", "[1,2,3,4,5,6,7,8]"));

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.body()).contains("model 'nope' is not known");
  }

  @Test
  void shouldAnswerTheReferenceResultThroughAWorkerThatHasTheFiles() throws Exception {
    float[][] x = DemoMlp.sampleInput(1, 5);
    StringBuilder data = new StringBuilder("[");
    for (int i = 0; i < 8; i++) data.append(i == 0 ? "" : ",").append(x[0][i]);
    HttpResponse<String> response = post("/v2/models/demo-b/versions/1/infer", body("[1,8]", data.append("]").toString()));

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode out = JSON.readTree(response.body()).get("outputs").get(0);
    float[][] expected = DemoMlp.reference(x, DemoMlp.adapterForServiceModel("demo-b").orElse(null), "1");
    for (int i = 0; i < 4; i++) {
      assertThat(out.get("data").get(i).floatValue()).isCloseTo(expected[0][i], org.assertj.core.api.Assertions.within(1e-4f));
    }
  }

  @Test
  void shouldFollowAServiceModelWithdrawnAndPublishedAgainWhileRunning() throws Exception {
    ServiceModelEntry demoC = scanned.serviceModel("demo-c").orElseThrow();
    assertThat(get("/v2/models/demo-c").statusCode()).isEqualTo(200);

    publishService("demo-c", null);
    producer.flush();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(get("/v2/models/demo-c").statusCode()).isEqualTo(404));
    assertThat(post("/v2/models/demo-c/infer", body("[1,8]", "[1,2,3,4,5,6,7,8]")).statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(get("/v2/models").body()).findValuesAsText("name")).doesNotContain("demo-c").contains("demo-a");

    publishService("demo-c", CatalogRecords.service(demoC));
    producer.flush();
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(get("/v2/models/demo-c").statusCode()).isEqualTo(200));
  }
}

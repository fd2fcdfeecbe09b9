package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.InferTensorContents;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import io.partita.gateway.grpc.proto.ModelInferResponse;
import io.partita.gateway.infer.ServerTiming;
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
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Infer answers say where their time went in the gateway: a {@code Server-Timing} header on HTTP and
 * a {@code server-timing} trailer on gRPC ModelInfer, each stage non-negative and all of them within
 * the round trip the client measured. Two gateways in front of one real worker with the demo
 * models: one as configured by default, one with {@code gateway.server.timing=false}.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerTimingIT {
  private static final Metadata.Key<String> SERVER_TIMING = Metadata.Key.of("server-timing", Metadata.ASCII_STRING_MARSHALLER);

  @TempDir static Path repo;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private InferenceWorker worker;
  private Gateway timed;
  private Gateway untimed;
  private ManagedChannel timedChannel;
  private ManagedChannel untimedChannel;

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("timing"));
    Map<String, String> values = new HashMap<>(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.grpc-port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "worker.threads", "1",
        "gateway.timeout.ms", "20000"));
    worker = new InferenceWorker(WorkerConfig.from(Settings.of(values)));
    worker.start();
    values.put("gateway.id", "timed");
    timed = new Gateway(GatewayConfig.from(Settings.of(values)));
    timed.start();
    values.put("gateway.id", "untimed");
    values.put("gateway.server.timing", "false");
    untimed = new Gateway(GatewayConfig.from(Settings.of(values)));
    untimed.start();
    timedChannel = NettyChannelBuilder.forAddress("localhost", timed.grpcPort()).usePlaintext().build();
    untimedChannel = NettyChannelBuilder.forAddress("localhost", untimed.grpcPort()).usePlaintext().build();
  }

  @AfterAll
  void stop() throws Exception {
    if (timedChannel != null) timedChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    if (untimedChannel != null) untimedChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    if (untimed != null) untimed.close();
    if (timed != null) timed.close();
    if (worker != null) worker.close();
  }

  private static String body(float[] row) {
    StringBuilder data = new StringBuilder();
    for (float v : row) {
      data.append(data.length() == 0 ? "" : ",").append(v);
    }
    return "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[" + data + "]}]}";
  }

  private HttpResponse<String> post(Gateway gateway, String model, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + gateway.port() + "/v2/models/" + model + "/infer"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json").build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static ModelInferRequest typed(String model, float[] row) {
    InferTensorContents.Builder contents = InferTensorContents.newBuilder();
    for (float v : row) {
      contents.addFp32Contents(v);
    }
    return ModelInferRequest.newBuilder().setModelName(model)
        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
            .addShape(1).addShape(row.length).setContents(contents))
        .build();
  }

  /** A stub whose calls leave their trailers in {@code trailers}. */
  private static GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub(ManagedChannel channel, AtomicReference<Metadata> trailers) {
    return GRPCInferenceServiceGrpc.newBlockingStub(channel)
        .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
        .withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  private static void assertStagesWithin(Map<String, Double> stages, double roundTripMs) {
    assertThat(stages.keySet()).containsExactlyElementsOf(ServerTiming.STAGES);
    assertThat(stages.values()).allSatisfy(ms -> assertThat(ms).isGreaterThanOrEqualTo(0));
    assertThat(stages.get("kafka")).as("the Kafka round trip is most of an infer call").isGreaterThan(0);
    double sum = stages.values().stream().mapToDouble(Double::doubleValue).sum();
    assertThat(sum).as("sum of %s against the client's round trip", stages).isLessThanOrEqualTo(roundTripMs);
  }

  @Test
  void shouldStampEveryStageOfAnHttpInferWithinTheClientsRoundTrip() throws Exception {
    post(timed, "demo", body(DemoMlp.sampleInput(1, 1)[0])); // connection and class loading out of the measured call
    for (int i = 0; i < 5; i++) {
      long start = System.nanoTime();
      HttpResponse<String> response = post(timed, "demo", body(DemoMlp.sampleInput(1, 2 + i)[0]));
      double roundTripMs = (System.nanoTime() - start) / 1e6;
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertStagesWithin(ServerTiming.parse(response.headers().firstValue("Server-Timing").orElseThrow()), roundTripMs);
    }
  }

  @Test
  void shouldStampEveryStageOfAGrpcModelInferInItsTrailers() {
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    stub(timedChannel, trailers).modelInfer(typed("demo", DemoMlp.sampleInput(1, 1)[0]));
    for (int i = 0; i < 5; i++) {
      long start = System.nanoTime();
      ModelInferResponse response = stub(timedChannel, trailers).modelInfer(typed("demo", DemoMlp.sampleInput(1, 2 + i)[0]));
      double roundTripMs = (System.nanoTime() - start) / 1e6;
      assertThat(response.getOutputsCount()).isEqualTo(1);
      assertStagesWithin(ServerTiming.parse(trailers.get().get(SERVER_TIMING)), roundTripMs);
    }
  }

  @Test
  void shouldCarryOnlyTheStagesThatRanOnARefusal() throws Exception {
    HttpResponse<String> response = post(timed, "demo", "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,3],\"data\":[1,2,3]}]}");
    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(ServerTiming.parse(response.headers().firstValue("Server-Timing").orElseThrow())).containsOnlyKeys("queue");

    AtomicReference<Metadata> trailers = new AtomicReference<>();
    ModelInferRequest wrong = typed("demo", new float[] {1, 2, 3});
    StatusRuntimeException e = catchThrowableOfType(() -> stub(timedChannel, trailers).modelInfer(wrong), StatusRuntimeException.class);
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(ServerTiming.parse(trailers.get().get(SERVER_TIMING))).containsOnlyKeys("queue");
  }

  @Test
  void shouldSendNoTimingWhenTurnedOff() throws Exception {
    HttpResponse<String> response = post(untimed, "demo", body(DemoMlp.sampleInput(1, 9)[0]));
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(response.headers().firstValue("Server-Timing")).isEmpty();

    AtomicReference<Metadata> trailers = new AtomicReference<>();
    ModelInferResponse answer = stub(untimedChannel, trailers).modelInfer(typed("demo", DemoMlp.sampleInput(1, 9)[0]));
    assertThat(answer.getOutputsCount()).isEqualTo(1);
    assertThat(trailers.get().get(SERVER_TIMING)).isNull();
  }
}

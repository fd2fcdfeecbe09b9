package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.InferTensorContents;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import io.partita.gateway.grpc.proto.ModelInferResponse;
import io.partita.gateway.grpc.proto.ModelMetadataRequest;
import io.partita.gateway.grpc.proto.ModelMetadataResponse;
import io.partita.gateway.grpc.proto.ModelReadyRequest;
import io.partita.gateway.grpc.proto.ModelStreamInferResponse;
import io.partita.gateway.grpc.proto.ServerLiveRequest;
import io.partita.gateway.grpc.proto.ServerMetadataRequest;
import io.partita.gateway.grpc.proto.ServerReadyRequest;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.testkit.KafkaFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code inference.GRPCInferenceService} against a Java client generated from the same proto: every
 * RPC, typed and raw contents, each error code with the HTTP message, the deadline and the keys.
 * The gateway has keys, a two-request in-flight limit and a 2 KiB body limit; a stand-in worker
 * ({@link FakeWorker}) echoes the first input or answers the error a request id asks for.
 */
@ExtendWith(KafkaFixture.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcApiIT {
  private static final String ALL = "all-key-0001";
  private static final String DEMO_ONLY = "demo-key-001";

  @TempDir static Path repo;
  private Gateway gateway;
  private FakeWorker worker;
  private ManagedChannel channel;

  @BeforeAll
  void start() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("grpc"));
    gateway = new Gateway(GatewayConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", topics.prefix(),
        "model.repo", repo.toString(),
        "http.port", "0",
        "gateway.grpc-port", "0",
        "gateway.routing", "any", // no planner in this test: produce without routes
        "gateway.api-keys", ALL + ":*," + DEMO_ONLY + ":demo",
        "gateway.max.in.flight", "2",
        "gateway.max.body.bytes", "2048",
        "gateway.timeout.ms", "20000"))));
    gateway.start();
    worker = new FakeWorker(topics, DemoMlp.SERVICE_MODELS);
    channel = NettyChannelBuilder.forAddress("localhost", gateway.grpcPort()).usePlaintext().build();
  }

  @AfterAll
  void stop() throws Exception {
    if (channel != null) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    if (worker != null) worker.close();
    if (gateway != null) gateway.close();
  }

  private GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub(String key, String requestId) {
    Metadata metadata = new Metadata();
    if (key != null) {
      metadata.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + key);
    }
    if (requestId != null) {
      metadata.put(Metadata.Key.of("x-request-id", Metadata.ASCII_STRING_MARSHALLER), requestId);
    }
    return GRPCInferenceServiceGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata))
        .withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  private static ModelInferRequest typed(String model, float... row) {
    InferTensorContents.Builder contents = InferTensorContents.newBuilder();
    for (float v : row) {
      contents.addFp32Contents(v);
    }
    return ModelInferRequest.newBuilder().setModelName(model).setId("client-1")
        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
            .addShape(1).addShape(row.length).setContents(contents))
        .build();
  }

  private static float[] row() {
    return new float[] {1.5f, -2, 3, 4, 5, 6, 7, 8.25f};
  }

  @Test
  void shouldAnswerHealthAndServerMetadataWithoutAKey() {
    var stub = stub(null, null);
    assertThat(stub.serverLive(ServerLiveRequest.getDefaultInstance()).getLive()).isTrue();
    assertThat(stub.serverReady(ServerReadyRequest.getDefaultInstance()).getReady()).isTrue();
    var metadata = stub.serverMetadata(ServerMetadataRequest.getDefaultInstance());
    assertThat(metadata.getName()).isEqualTo("partita");
    assertThat(metadata.getExtensionsList()).contains("binary_tensor_data");
  }

  @Test
  void shouldAnswerModelReadyAndMetadataFromTheSignature() {
    var stub = stub(DEMO_ONLY, null);
    assertThat(stub.modelReady(ModelReadyRequest.newBuilder().setName("demo").build()).getReady()).isTrue();
    ModelMetadataResponse metadata = stub.modelMetadata(ModelMetadataRequest.newBuilder().setName("demo").build());
    assertThat(metadata.getName()).isEqualTo("demo");
    assertThat(metadata.getPlatform()).isEqualTo("onnxruntime_onnx");
    assertThat(metadata.getVersionsList()).isNotEmpty();
    assertThat(metadata.getInputs(0).getName()).isEqualTo("input");
    assertThat(metadata.getInputs(0).getDatatype()).isEqualTo("FP32");
    assertThat(metadata.getInputs(0).getShapeList()).endsWith((long) DemoMlp.INPUT_SIZE);
    assertThat(metadata.getOutputs(0).getName()).isEqualTo("output");
  }

  @Test
  void shouldCarryTypedContentsBothWays() {
    ModelInferResponse response = stub(ALL, null).modelInfer(typed("demo", row()));
    // where it ran, from the reply's instance, as the HTTP answer says it
    assertThat(response.getParametersMap().get("partita_host").getStringParam()).isEqualTo(FakeWorker.HOST);
    assertThat(response.getParametersMap().get("partita_slot").getStringParam()).startsWith("cpu-");
    assertThat(response.getModelName()).isEqualTo("demo");
    assertThat(response.getId()).isEqualTo("client-1");
    assertThat(response.getRawOutputContentsCount()).isZero();
    assertThat(response.getOutputs(0).getShapeList()).containsExactly(1L, 8L); // the stand-in echoes
    assertThat(response.getOutputs(0).getContents().getFp32ContentsList()).containsExactly(1.5f, -2f, 3f, 4f, 5f, 6f, 7f, 8.25f);
  }

  @Test
  void shouldCarryRawContentsBothWays() {
    byte[] data = GatewayLimitsIT.floats(row());
    ModelInferRequest request = ModelInferRequest.newBuilder().setModelName("demo")
        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32").addShape(1).addShape(8))
        .addRawInputContents(ByteString.copyFrom(data))
        .addOutputs(ModelInferRequest.InferRequestedOutputTensor.newBuilder().setName("output"))
        .build();
    ModelInferResponse response = stub(ALL, null).modelInfer(request);
    assertThat(response.getOutputs(0).hasContents()).isFalse();
    assertThat(response.getRawOutputContents(0).toByteArray()).isEqualTo(data);
  }

  @Test
  void shouldAnswerEachRequestOnTheStreamIncludingRefusals() throws Exception {
    CompletableFuture<List<ModelStreamInferResponse>> all = new CompletableFuture<>();
    List<ModelStreamInferResponse> got = new ArrayList<>();
    Metadata metadata = new Metadata();
    metadata.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + ALL);
    StreamObserver<ModelInferRequest> requests = GRPCInferenceServiceGrpc.newStub(channel)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(metadata)).withDeadlineAfter(30, TimeUnit.SECONDS)
        .modelStreamInfer(new StreamObserver<>() {
          @Override public void onNext(ModelStreamInferResponse r) { synchronized (got) { got.add(r); } }
          @Override public void onError(Throwable t) { all.completeExceptionally(t); }
          @Override public void onCompleted() { all.complete(got); }
        });
    requests.onNext(typed("demo", row()));
    requests.onNext(typed("no-such-model", row()));
    requests.onNext(typed("demo-a", row()));
    requests.onCompleted();
    List<ModelStreamInferResponse> responses = all.get(30, TimeUnit.SECONDS);
    assertThat(responses).hasSize(3);
    assertThat(responses).filteredOn(r -> r.getErrorMessage().isEmpty()).hasSize(2)
        .allSatisfy(r -> assertThat(r.getInferResponse().getOutputs(0).getContents().getFp32ContentsCount()).isEqualTo(8));
    assertThat(responses).filteredOn(r -> !r.getErrorMessage().isEmpty()).singleElement()
        .satisfies(r -> assertThat(r.getErrorMessage()).contains("model 'no-such-model' is not known"));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "no key|demo||UNAUTHENTICATED|an API key is required",
      "unknown key|demo|not-a-key-99|PERMISSION_DENIED|the API key is not known",
      "key not allowed for the model|demo-a|" + DEMO_ONLY + "|PERMISSION_DENIED|may not use model 'demo-a'",
      "unknown model|nope|" + ALL + "|NOT_FOUND|model 'nope' is not known"})
  void shouldRefuseKeysAndModelsWithTheHttpMessages(String name, String model, String key, Status.Code code, String message) {
    StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> stub(key, null).modelInfer(typed(model, row())));
    assertThat(e.getStatus().getCode()).isEqualTo(code);
    assertThat(e.getStatus().getDescription()).contains(message);
  }

  @Test
  void shouldRefuseBadTensorsWithInvalidArgumentNamingTheField() {
    StatusRuntimeException shape = catchThrowableOfType(StatusRuntimeException.class, () -> stub(ALL, null).modelInfer(typed("demo", 1, 2, 3)));
    assertThat(shape.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(shape.getStatus().getDescription()).startsWith("input 'input'.shape[1]: expected 8, got 3");
    ModelInferRequest rawAndTyped = typed("demo", row()).toBuilder().addRawInputContents(ByteString.copyFrom(GatewayLimitsIT.floats(row()))).build();
    StatusRuntimeException both = catchThrowableOfType(StatusRuntimeException.class, () -> stub(ALL, null).modelInfer(rawAndTyped));
    assertThat(both.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(both.getStatus().getDescription()).contains("has both contents and raw_input_contents");
    ModelInferRequest shortRaw = ModelInferRequest.newBuilder().setModelName("demo")
        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32").addShape(1).addShape(8))
        .addRawInputContents(ByteString.copyFrom(new byte[12])).build();
    StatusRuntimeException raw = catchThrowableOfType(StatusRuntimeException.class, () -> stub(ALL, null).modelInfer(shortRaw));
    assertThat(raw.getStatus().getDescription()).contains("needs 8 FP32 elements (32 bytes), got 12 bytes");
  }

  @Test
  void shouldRefuseAMessageOverTheBodyLimitWithResourceExhausted() {
    ModelInferRequest big = ModelInferRequest.newBuilder().setModelName("demo")
        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32").addShape(100).addShape(8))
        .addRawInputContents(ByteString.copyFrom(new byte[3200])).build();
    StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> stub(ALL, null).modelInfer(big));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({"BAD_INPUT,INVALID_ARGUMENT", "NOT_FOUND,NOT_FOUND", "NOT_READY,UNAVAILABLE", "DEADLINE_EXCEEDED,DEADLINE_EXCEEDED",
      "OVERLOADED,RESOURCE_EXHAUSTED", "MODEL_ERROR,INTERNAL"})
  void shouldMapErrorRepliesToCodesWithTheWorkersMessageButNoPath(String code, Status.Code grpc) {
    StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
        () -> stub(ALL, "code-" + code + "-" + System.nanoTime()).modelInfer(typed("demo", row())));
    assertThat(e.getStatus().getCode()).isEqualTo(grpc);
    assertThat(e.getStatus().getDescription()).isEqualTo("failed at <path>");
  }

  @Test
  void shouldMakeTheCallDeadlineTheRequestDeadlineAndGiveTheSlotsBack() {
    // Two held requests fill the in-flight limit of 2; a third is refused with RESOURCE_EXHAUSTED.
    List<CompletableFuture<Status.Code>> held = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      String id = "hold-" + i + "-" + System.nanoTime();
      held.add(CompletableFuture.supplyAsync(() -> {
        try {
          stub(ALL, id).withDeadlineAfter(1500, TimeUnit.MILLISECONDS).modelInfer(typed("demo", row()));
          return Status.Code.OK;
        } catch (StatusRuntimeException e) {
          return e.getStatus().getCode();
        }
      }));
    }
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class, () -> stub(ALL, null).modelInfer(typed("demo", row())));
      assertThat(e).isNotNull();
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(e.getStatus().getDescription()).contains("gateway.max.in.flight");
    });
    held.forEach(f -> assertThat(f.join()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    // The gateway used the 1.5 s call deadline, not its 20 s default: the slots come back at once.
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
        assertThat(stub(ALL, null).modelInfer(typed("demo", row())).getOutputsCount()).isEqualTo(1));
  }
}

package io.partita.gateway.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.partita.avro.InferenceReply;
import io.partita.gateway.auth.ApiKeys;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.InferParameter;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import io.partita.gateway.grpc.proto.ModelInferResponse;
import io.partita.gateway.grpc.proto.ModelMetadataRequest;
import io.partita.gateway.grpc.proto.ModelMetadataResponse;
import io.partita.gateway.grpc.proto.ModelReadyRequest;
import io.partita.gateway.grpc.proto.ModelReadyResponse;
import io.partita.gateway.grpc.proto.ModelStreamInferResponse;
import io.partita.gateway.grpc.proto.ServerLiveRequest;
import io.partita.gateway.grpc.proto.ServerLiveResponse;
import io.partita.gateway.grpc.proto.ServerMetadataRequest;
import io.partita.gateway.grpc.proto.ServerMetadataResponse;
import io.partita.gateway.grpc.proto.ServerReadyRequest;
import io.partita.gateway.grpc.proto.ServerReadyResponse;
import io.partita.gateway.infer.AnsweredBy;
import io.partita.gateway.infer.InferService;
import io.partita.gateway.infer.RequestIds;
import io.partita.gateway.infer.ServerTiming;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.TensorSpec;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code inference.GRPCInferenceService}, the Open Inference Protocol's gRPC API, over the same
 * {@link InferService} as HTTP: the same key checks ({@code authorization: Bearer KEY} or
 * {@code x-api-key} metadata), model lookup, validation, routing and limits, refused with the same
 * messages. The call's deadline ({@code grpc-timeout}) becomes the request's deadline. A refusal's
 * kind becomes a gRPC code by {@link #code}, the one place that says refusals in gRPC's words.
 * Outputs come back raw ({@code raw_output_contents}) when the inputs were sent raw, typed
 * otherwise.
 */
public final class GrpcApi extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {
  private static final Logger log = LoggerFactory.getLogger(GrpcApi.class);
  static final Context.Key<String> KEY = Context.key("partita-api-key");
  static final Context.Key<String> REQUEST_ID = Context.key("partita-request-id");
  static final Context.Key<String> TRACEPARENT = Context.key("partita-traceparent");
  private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> X_API_KEY = Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> X_REQUEST_ID = Metadata.Key.of("x-request-id", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> TRACE = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
  static final Context.Key<ServerTiming> TIMING = Context.key("partita-server-timing");
  static final Metadata.Key<String> SERVER_TIMING = Metadata.Key.of(ServerTiming.GRPC_KEY, Metadata.ASCII_STRING_MARSHALLER);

  private final InferService infer;
  private final GatewayMetrics metrics;
  private final List<String> extensions;
  private final boolean serverTiming;

  /** @param serverTiming whether ModelInfer answers carry a {@code server-timing} trailer ({@code gateway.server.timing}) */
  public GrpcApi(InferService infer, GatewayMetrics metrics, List<String> extensions, boolean serverTiming) {
    this.infer = infer;
    this.metrics = metrics;
    this.extensions = extensions;
    this.serverTiming = serverTiming;
  }

  /**
   * Puts the presented key, request id and traceparent of each call into its context; for ModelInfer
   * with {@code gateway.server.timing} on, also its {@link ServerTiming}, started now (the call's
   * headers are in), whose stages go out in the {@code server-timing} trailer, on success and on error.
   */
  public ServerInterceptor metadata() {
    return new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        ServerTiming timing = null;
        if (serverTiming && call.getMethodDescriptor() == GRPCInferenceServiceGrpc.getModelInferMethod()) {
          ServerTiming stamps = new ServerTiming(System.nanoTime());
          timing = stamps;
          call = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
              String value = stamps.header();
              if (!value.isEmpty()) {
                trailers.put(SERVER_TIMING, value);
              }
              super.close(status, trailers);
            }
          };
        }
        String key = ApiKeys.presented(headers.get(AUTHORIZATION), headers.get(X_API_KEY));
        String id = RequestIds.orNew(headers.get(X_REQUEST_ID));
        Context context = Context.current().withValue(KEY, key).withValue(REQUEST_ID, id).withValue(TRACEPARENT, headers.get(TRACE))
            .withValue(TIMING, timing);
        return Contexts.interceptCall(context, call, headers, next);
      }
    };
  }

  /** The gRPC code for a refusal's kind. */
  public static Status.Code code(Kind kind) {
    return switch (kind) {
      case BAD_INPUT -> Status.Code.INVALID_ARGUMENT;
      case UNAUTHORIZED -> Status.Code.UNAUTHENTICATED;
      case FORBIDDEN -> Status.Code.PERMISSION_DENIED;
      case NOT_FOUND -> Status.Code.NOT_FOUND;
      case WRONG_METHOD -> Status.Code.UNIMPLEMENTED;
      case CONFLICT -> Status.Code.ALREADY_EXISTS;
      case TOO_LARGE, OVERLOADED -> Status.Code.RESOURCE_EXHAUSTED;
      case CLIENT_GONE -> Status.Code.CANCELLED;
      case NOT_READY -> Status.Code.UNAVAILABLE;
      case DEADLINE_EXCEEDED -> Status.Code.DEADLINE_EXCEEDED;
      case MODEL_ERROR, INTERNAL -> Status.Code.INTERNAL;
    };
  }

  @Override
  public void serverLive(ServerLiveRequest request, StreamObserver<ServerLiveResponse> out) {
    answer(out, "health", null, () -> ServerLiveResponse.newBuilder().setLive(true).build());
  }

  @Override
  public void serverReady(ServerReadyRequest request, StreamObserver<ServerReadyResponse> out) {
    answer(out, "health", null, () -> ServerReadyResponse.newBuilder().setReady(infer.ready()).build());
  }

  @Override
  public void serverMetadata(ServerMetadataRequest request, StreamObserver<ServerMetadataResponse> out) {
    answer(out, "server", null, () -> {
      String version = GrpcApi.class.getPackage().getImplementationVersion();
      return ServerMetadataResponse.newBuilder().setName("partita").setVersion(version == null ? "development" : version)
          .addAllExtensions(extensions).build();
    });
  }

  @Override
  public void modelReady(ModelReadyRequest request, StreamObserver<ModelReadyResponse> out) {
    answer(out, "ready", request.getName(), () -> {
      infer.authorize(KEY.get(), request.getName());
      InferService.Resolved model = infer.resolve(request.getName(), request.getVersion());
      return ModelReadyResponse.newBuilder().setReady(infer.modelReady(model.service().name())).build();
    });
  }

  @Override
  public void modelMetadata(ModelMetadataRequest request, StreamObserver<ModelMetadataResponse> out) {
    answer(out, "metadata", request.getName(), () -> {
      infer.authorize(KEY.get(), request.getName());
      InferService.Resolved model = infer.resolve(request.getName(), request.getVersion());
      ModelEntry base = infer.index().models().get(model.service().baseModel());
      if (base == null) { // withdrawn since the call was resolved
        throw Refusal.notFound("model '" + model.service().name() + "' is no longer offered");
      }
      ModelMetadataResponse.Builder b = ModelMetadataResponse.newBuilder().setName(model.service().name()).setPlatform("onnxruntime_onnx");
      if (model.pinned() == null) {
        b.addAllVersions(base.versions().keySet());
      } else {
        b.addVersions(model.pinned().version());
      }
      model.version().signature().inputs().forEach(s -> b.addInputs(tensor(s)));
      model.version().signature().outputs().forEach(s -> b.addOutputs(tensor(s)));
      return b.build();
    });
  }

  private static ModelMetadataResponse.TensorMetadata tensor(TensorSpec s) {
    return ModelMetadataResponse.TensorMetadata.newBuilder().setName(s.name()).setDatatype(s.type().oipDatatype())
        .addAllShape(s.shape()).build();
  }

  @Override
  public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
    long start = System.nanoTime();
    String model = request.getModelName();
    ServerTiming timing = TIMING.get();
    if (timing != null) {
      timing.handling(start);
    }
    try {
      infer(request, REQUEST_ID.get(), timing).whenComplete((response, failure) -> {
        if (failure == null) {
          out.onNext(response); // serialized here: counted in encode
          if (timing != null) {
            timing.encoded();
          }
          out.onCompleted();
          metrics.served(model, "infer", System.nanoTime() - start);
        } else {
          fail(out, failure, model, "infer", start);
        }
      });
    } catch (RuntimeException e) {
      fail(out, e, model, "infer", start);
    }
  }

  @Override
  public StreamObserver<ModelInferRequest> modelStreamInfer(StreamObserver<ModelStreamInferResponse> out) {
    ServerCallStreamObserver<ModelStreamInferResponse> stream = (ServerCallStreamObserver<ModelStreamInferResponse>) out;
    Context context = Context.current();
    AtomicInteger pending = new AtomicInteger(1); // 1 for the client's side until it half-closes
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger sequence = new AtomicInteger();
    Runnable finishOne = () -> {
      if (pending.decrementAndGet() == 0 && done.compareAndSet(false, true)) {
        synchronized (stream) {
          stream.onCompleted();
        }
      }
    };
    return new StreamObserver<>() {
      @Override
      public void onNext(ModelInferRequest request) {
        pending.incrementAndGet();
        long start = System.nanoTime();
        String id = REQUEST_ID.get(context) + "-" + sequence.incrementAndGet();
        CompletableFuture<ModelInferResponse> answer;
        try {
          answer = infer(request, id, null);
        } catch (RuntimeException e) {
          answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((response, failure) -> {
          ModelStreamInferResponse.Builder b = ModelStreamInferResponse.newBuilder();
          if (failure == null) {
            b.setInferResponse(response);
            metrics.served(request.getModelName(), "infer", System.nanoTime() - start);
          } else {
            Refusal e = refusal(failure);
            b.setErrorMessage(e.getMessage());
            b.setInferResponse(ModelInferResponse.newBuilder().setModelName(request.getModelName()).setId(request.getId()));
            metrics.refused(request.getModelName(), "infer", e.kind(), System.nanoTime() - start);
          }
          synchronized (stream) {
            if (!done.get() && !stream.isCancelled()) {
              stream.onNext(b.build());
            }
          }
          finishOne.run();
        });
      }

      @Override
      public void onError(Throwable t) {
        done.set(true);
      }

      @Override
      public void onCompleted() {
        finishOne.run();
      }
    };
  }

  /** Checks and submits one infer request; the future carries the response or a {@link Refusal}. */
  private CompletableFuture<ModelInferResponse> infer(ModelInferRequest request, String requestId, ServerTiming timing) {
    String name = request.getModelName();
    infer.authorize(KEY.get(), name);
    InferService.Resolved model = infer.resolve(name, request.getModelVersion());
    Long timeoutMs = null;
    Deadline deadline = Context.current().getDeadline();
    if (deadline != null) {
      long left = deadline.timeRemaining(TimeUnit.MILLISECONDS);
      if (left <= 0) {
        throw new Refusal(Kind.DEADLINE_EXCEEDED, "no reply before the deadline (0 ms); the request was not sent");
      }
      timeoutMs = left;
    }
    var inputs = GrpcTensors.inputs(request, model.version().signature());
    var outputs = GrpcTensors.outputs(request, model.version().signature());
    boolean raw = request.getRawInputContentsCount() > 0;
    String traceparent = TRACEPARENT.get();
    return infer.submit(new InferService.Submit(requestId, model, inputs, outputs, timeoutMs, traceparent), timing)
        .thenApply(reply -> response(reply, request.getId().isEmpty() ? null : request.getId(), raw));
  }

  private static ModelInferResponse response(InferenceReply reply, String clientId, boolean raw) {
    ModelInferResponse.Builder b = ModelInferResponse.newBuilder().setModelName(reply.getServiceModel())
        .setId(clientId != null ? clientId : reply.getId());
    if (reply.getModelVersion() != null) {
      b.setModelVersion(reply.getModelVersion());
    }
    AnsweredBy where = AnsweredBy.of(reply.getInstance());
    if (where != null) {
      b.putParameters(AnsweredBy.HOST, InferParameter.newBuilder().setStringParam(where.host()).build());
      b.putParameters(AnsweredBy.SLOT, InferParameter.newBuilder().setStringParam(where.slot()).build());
    }
    GrpcTensors.outputs(reply.getOutputs(), raw, b);
    return b.build();
  }

  private interface Work<T> {
    T run();
  }

  private <T> void answer(StreamObserver<T> out, String endpoint, String model, Work<T> work) {
    long start = System.nanoTime();
    try {
      T value = work.run();
      out.onNext(value);
      out.onCompleted();
      metrics.served(model, endpoint, System.nanoTime() - start);
    } catch (RuntimeException e) {
      fail(out, e, model, endpoint, start);
    }
  }

  private static Refusal refusal(Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof Refusal e) {
      return e;
    }
    log.error("Unexpected failure of a gRPC call", cause);
    return new Refusal(Kind.INTERNAL, "internal error; see the gateway log");
  }

  private void fail(StreamObserver<?> out, Throwable failure, String model, String endpoint, long start) {
    Refusal e = refusal(failure);
    metrics.refused(model, endpoint, e.kind(), System.nanoTime() - start);
    out.onError(Status.fromCode(code(e.kind())).withDescription(e.getMessage()).asRuntimeException());
  }
}

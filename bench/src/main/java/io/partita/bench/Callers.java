package io.partita.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.partita.avro.InferenceReply;
import io.partita.avro.Tensor;
import io.partita.bench.OpenLoad.Caller;
import io.partita.bench.OpenLoad.Outcome;
import io.partita.client.PartitaClient;
import io.partita.gateway.grpc.proto.GRPCInferenceServiceGrpc;
import io.partita.gateway.grpc.proto.InferParameter;
import io.partita.gateway.grpc.proto.ModelInferRequest;
import io.partita.gateway.grpc.proto.ModelInferResponse;
import io.partita.gateway.infer.AnsweredBy;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** The ways an {@link OpenLoad} calls Partita: a Kafka client, and HTTP through the gateways. */
public final class Callers {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Map<Integer, String> CODES = Map.of(400, "BAD_INPUT", 404, "NOT_FOUND", 429, "OVERLOADED",
      500, "MODEL_ERROR", 503, "NOT_READY", 504, "DEADLINE_EXCEEDED");

  private Callers() {}

  /**
   * Requests produced by a {@link PartitaClient} straight to the base model's request topic, as any
   * Kafka producer makes them; the answering host comes from the reply's {@code instance}.
   */
  public static Caller kafka(PartitaClient client, String baseModel, String serviceModel, List<Tensor> inputs) {
    return seq -> client.infer(baseModel, serviceModel, inputs).thenApply(Callers::outcome);
  }

  static Outcome outcome(InferenceReply reply) {
    AnsweredBy where = AnsweredBy.of(reply.getInstance());
    String host = where == null ? null : where.host();
    return reply.getError() == null ? Outcome.ok(host)
        : new Outcome(reply.getError().getCode().name(), host, reply.getError().getMessage());
  }

  /**
   * OIP v2 infer calls over HTTP, spread round-robin over the gateways. A call whose gateway cannot
   * be reached (connection refused or reset: a gateway that was killed) is sent again to the next
   * gateway, as a client with two addresses does; {@link #retries} counts those. The answering host
   * is the answer's {@code partita_host} parameter.
   */
  public static final class Http implements Caller {
    private final HttpClient client;
    private final List<URI> gateways;
    private final String path;
    private final byte[] body;
    private final Duration timeout;
    private final AtomicLong retries = new AtomicLong();

    /**
     * @param gateways base URIs, e.g. {@code http://198.18.3.31:8080}
     * @param model the service model called
     * @param body an OIP JSON infer body
     */
    public Http(HttpClient client, List<URI> gateways, String model, byte[] body, Duration timeout) {
      this.client = client;
      this.gateways = List.copyOf(gateways);
      this.path = "/v2/models/" + model + "/infer";
      this.body = body.clone();
      this.timeout = timeout;
    }

    /** Calls sent again to another gateway because theirs could not be reached. */
    public long retries() {
      return retries.get();
    }

    @Override
    public CompletableFuture<Outcome> call(long seq) {
      return attempt((int) (seq % gateways.size()), 0);
    }

    private CompletableFuture<Outcome> attempt(int gateway, int tried) {
      HttpRequest request = HttpRequest.newBuilder(gateways.get(gateway).resolve(path)).timeout(timeout)
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
      return client.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
          .thenApply(Http::outcome)
          .exceptionallyCompose(failure -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            if (unreachable(cause) && tried + 1 < gateways.size()) {
              retries.incrementAndGet();
              return attempt((gateway + 1) % gateways.size(), tried + 1);
            }
            String code = cause instanceof HttpTimeoutException ? "TIMEOUT" : unreachable(cause) ? "CONNECTION" : "FAILED";
            return CompletableFuture.completedFuture(new Outcome(code, null, cause.toString()));
          });
    }

    private static boolean unreachable(Throwable cause) {
      return cause instanceof ConnectException
          || cause instanceof IOException && !(cause instanceof HttpTimeoutException)
              && String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT).matches(".*(reset|closed|refused|eof|broken pipe).*");
    }

    private static Outcome outcome(HttpResponse<byte[]> response) {
      try {
        JsonNode answer = JSON.readTree(response.body());
        if (response.statusCode() == 200) {
          JsonNode host = answer.path("parameters").get(AnsweredBy.HOST);
          return Outcome.ok(host == null ? null : host.asText());
        }
        return new Outcome(CODES.getOrDefault(response.statusCode(), "HTTP_" + response.statusCode()), null,
            answer.path("error").asText(null));
      } catch (IOException e) {
        return new Outcome(response.statusCode() == 200 ? "FAILED" : "HTTP_" + response.statusCode(), null,
            "the answer is not JSON: " + e.getMessage());
      }
    }
  }

  /**
   * OIP v2 {@code ModelInfer} calls over gRPC (raw input contents, as Triton's clients send),
   * spread round-robin over the gateways' gRPC ports. A call whose gateway cannot be reached
   * ({@code UNAVAILABLE}: a gateway that was killed) is sent again to the next one, counted in
   * {@link #retries}. Error statuses map back to the reply codes the gateway maps them from.
   */
  public static final class Grpc implements Caller, AutoCloseable {
    private static final Map<Status.Code, String> CODES = Map.of(Status.Code.INVALID_ARGUMENT, "BAD_INPUT",
        Status.Code.NOT_FOUND, "NOT_FOUND", Status.Code.RESOURCE_EXHAUSTED, "OVERLOADED", Status.Code.INTERNAL, "MODEL_ERROR",
        Status.Code.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED");
    private final List<ManagedChannel> channels;
    private final List<GRPCInferenceServiceGrpc.GRPCInferenceServiceFutureStub> stubs;
    private final ModelInferRequest request;
    private final Duration timeout;
    private final AtomicLong retries = new AtomicLong();

    /** @param gateways {@code host:port} of each gateway's gRPC API */
    public Grpc(List<String> gateways, String model, Tensor input, Duration timeout) {
      this.channels = gateways.stream().map(g -> (ManagedChannel) NettyChannelBuilder.forTarget(g).usePlaintext().build()).toList();
      this.stubs = channels.stream().map(GRPCInferenceServiceGrpc::newFutureStub).toList();
      this.request = ModelInferRequest.newBuilder().setModelName(model)
          .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName(input.getName()).setDatatype(input.getDatatype())
              .addAllShape(input.getShape()))
          .addRawInputContents(ByteString.copyFrom(input.getData().duplicate())).build();
      this.timeout = timeout;
    }

    public long retries() {
      return retries.get();
    }

    @Override
    public CompletableFuture<Outcome> call(long seq) {
      CompletableFuture<Outcome> out = new CompletableFuture<>();
      attempt((int) (seq % stubs.size()), 0, out);
      return out;
    }

    private void attempt(int gateway, int tried, CompletableFuture<Outcome> out) {
      var future = stubs.get(gateway).withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS).modelInfer(request);
      future.addListener(() -> {
        try {
          ModelInferResponse response = future.get();
          InferParameter host = response.getParametersMap().get(AnsweredBy.HOST);
          out.complete(Outcome.ok(host == null ? null : host.getStringParam()));
        } catch (ExecutionException e) {
          Status status = Status.fromThrowable(e.getCause());
          if (status.getCode() == Status.Code.UNAVAILABLE && tried + 1 < stubs.size()) {
            retries.incrementAndGet();
            attempt((gateway + 1) % stubs.size(), tried + 1, out);
          } else if (status.getCode() == Status.Code.UNAVAILABLE) {
            out.complete(new Outcome(String.valueOf(status.getDescription()).contains("no ready instance")
                || String.valueOf(status.getDescription()).contains("no route") ? "NOT_READY" : "CONNECTION", null,
                status.getDescription()));
          } else {
            out.complete(new Outcome(CODES.getOrDefault(status.getCode(), "GRPC_" + status.getCode()), null, status.getDescription()));
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          out.completeExceptionally(e);
        }
      }, Runnable::run);
    }

    @Override
    public void close() throws InterruptedException {
      for (ManagedChannel c : channels) {
        c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}

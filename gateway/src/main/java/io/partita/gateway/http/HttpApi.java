package io.partita.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.avro.InferenceReply;
import io.partita.gateway.auth.ApiKeys;
import io.partita.gateway.catalog.ModelCatalog;
import io.partita.gateway.health.Readiness;
import io.partita.gateway.infer.Coalescer;
import io.partita.gateway.infer.InferService;
import io.partita.gateway.infer.RequestIds;
import io.partita.gateway.infer.ServerTiming;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.oip.InferAnswer;
import io.partita.gateway.oip.InferBody;
import io.partita.gateway.oip.JsonLimits;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import io.partita.gateway.server.Exchange;
import io.partita.gateway.server.HttpFrontDoor;
import io.partita.gateway.server.HttpStatus;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Open Inference Protocol v2 HTTP endpoints, {@code /metrics}, and (through {@link JobsApi}) the
 * batch job endpoints. Everything from outside is checked before anything is produced, in this
 * order: API key (401, 403), model and version (404), body size (413), body content (400, naming
 * the field), then routing (503 when the service model has no route or no ready instance, with
 * {@code gateway.routing=plan}), then the in-flight limit (429 with {@code Retry-After}). An infer call registers its
 * waiter before producing, answers 504 at its deadline and always gives its slot back; an error
 * reply becomes the matching HTTP status with the worker's message. Every refusal, from here or from
 * the infer path, is answered with the status {@link HttpStatus} gives its kind. No answer carries a
 * stack trace or a file path.
 */
public final class HttpApi implements HttpFrontDoor.Handler {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  /**
   * What the endpoints need.
   *
   * @param readiness whether the gateway and each model can serve, and why not ({@link Readiness})
   * @param jobs the batch job endpoints, or null when jobs are off
   * @param calls what one infer call may take and how it is answered
   * @param coalescer packs concurrent infer calls into shared requests, or null ({@code gateway.coalesce.enabled=false})
   */
  public record Deps(ModelCatalog catalog, RequestProducer requests, Capacity capacity, ApiKeys keys,
      GatewayMetrics metrics, JobsApi jobs, Readiness readiness, CallSettings calls, Coalescer coalescer) {

    /** The transport-free infer path over the same parts, shared with the gRPC front door. */
    public InferService inferService() {
      return new InferService(new InferService.Deps(catalog, requests, capacity, keys, readiness, calls.defaultTimeoutMs(), coalescer));
    }
  }

  /**
   * What one infer call may take and how it is answered.
   *
   * @param defaultTimeoutMs how long a call waits for its reply unless it asks otherwise ({@code gateway.timeout.ms})
   * @param maxBodyBytes largest infer body ({@code gateway.max.body.bytes})
   * @param retryAfterSeconds the {@code Retry-After} of a 429 ({@code gateway.retry.after.seconds})
   * @param json the limits infer bodies are read within ({@code gateway.json.*})
   * @param serverTiming whether infer answers carry a {@code Server-Timing} header ({@code gateway.server.timing})
   */
  public record CallSettings(long defaultTimeoutMs, long maxBodyBytes, int retryAfterSeconds, JsonLimits json,
      boolean serverTiming) {}

  private final Deps deps;
  private final InferService infer;

  public HttpApi(Deps deps) {
    this.deps = deps;
    this.infer = deps.inferService();
  }

  @Override
  public void handle(Exchange exchange) {
    String requestId = RequestIds.orNew(exchange.getRequestHeaders().getFirst("X-Request-Id"));
    exchange.getResponseHeaders().set("X-Request-Id", requestId);
    Call call = new Call(exchange, requestId, deps.metrics());
    try {
      route(call);
    } catch (Refusal e) {
      if (e.kind() == Kind.OVERLOADED) {
        exchange.getResponseHeaders().set("Retry-After", Integer.toString(deps.calls().retryAfterSeconds()));
      }
      call.error(HttpStatus.of(e.kind()), e.getMessage());
    } catch (RuntimeException | IOException e) {
      log.error("Unexpected failure on {} {}", exchange.getRequestMethod(), exchange.getRequestURI().getPath(), e);
      call.error(500, "internal error; see the gateway log for request " + requestId);
    }
  }

  private void route(Call call) throws IOException {
    String method = call.method();
    String path = call.exchange.getRequestURI().getPath();
    if (path.equals("/metrics")) {
      call.endpoint = "metrics";
      requireGet(method);
      call.bytes(200, "text/plain; version=0.0.4; charset=utf-8", deps.metrics().scrape().getBytes(StandardCharsets.UTF_8));
      return;
    }
    if (path.equals("/")) { // the live dashboard (gateway/dashboard)
      call.exchange.getResponseHeaders().set("Location", "/dashboard/");
      call.bytes(302, "text/plain; charset=utf-8", new byte[0]);
      return;
    }
    int end = path.length();
    while (end > 0 && path.charAt(end - 1) == '/') { // trailing slashes do not count
      end--;
    }
    String[] p = path.substring(0, end).split("/");
    // p[0] is "" (leading slash)
    if (p.length < 2 || !p[1].equals("v2")) {
      throw Refusal.notFound("no such endpoint; the API lives under /v2");
    }
    if (p.length == 2) {
      call.endpoint = "server";
      requireGet(method);
      call.json(200, serverMetadata());
      return;
    }
    if (p.length == 4 && p[2].equals("health")) {
      call.endpoint = "health";
      requireGet(method);
      switch (p[3]) {
        case "live" -> call.json(200, InferBody.JSON.createObjectNode().put("live", true));
        case "ready" -> {
          Readiness.Verdict ready = deps.readiness().server();
          call.json(HttpStatus.of(ready), HealthJson.of(ready, InferBody.JSON.createObjectNode()));
        }
        default -> throw Refusal.notFound("no such endpoint");
      }
      return;
    }
    if (p[2].equals("jobs")) {
      call.endpoint = "jobs";
      if (deps.jobs() == null) {
        throw Refusal.notFound("batch jobs are off on this gateway (gateway.jobs.enabled=false)");
      }
      deps.jobs().handle(call, p, presentedKey(call));
      return;
    }
    if (p[2].equals("models")) {
      models(call, p);
      return;
    }
    throw Refusal.notFound("no such endpoint");
  }

  private void models(Call call, String[] p) throws IOException {
    String method = call.method();
    String key = presentedKey(call);
    if (p.length == 3) {
      call.endpoint = "metadata";
      requireGet(method);
      authorize(key, null);
      ObjectNode out = InferBody.JSON.createObjectNode();
      ArrayNode models = out.putArray("models");
      RepositoryIndex index = deps.catalog().current();
      index.serviceModels().values().forEach(s -> {
        if (deps.keys().check(key, s.name()).allowed()) {
          ObjectNode m = models.addObject().put("name", s.name()).put("base_model", s.baseModel());
          ArrayNode versions = m.putArray("versions");
          index.models().get(s.baseModel()).versions().keySet().forEach(versions::add);
          m.put("ready", deps.readiness().model(s.name()).ready());
        }
      });
      call.json(200, out);
      return;
    }
    String model = p[3];
    String version = null;
    int next = 4;
    if (p.length >= 6 && p[4].equals("versions")) {
      version = p[5];
      next = 6;
    }
    String action = p.length > next ? p[next] : null;
    call.endpoint = action == null ? "metadata" : action.equals("ready") ? "ready" : action.equals("infer") ? "infer" : "other";
    if (p.length > next + 1 || (p.length == 5 && !p[4].equals("ready") && !p[4].equals("infer"))) {
      throw Refusal.notFound("no such endpoint");
    }
    authorize(key, model);
    InferService.Resolved resolved = infer.resolve(model, version);
    ServiceModelEntry service = resolved.service();
    call.model = service.name();
    VersionEntry entry = resolved.version();
    if (action == null) {
      requireGet(method);
      call.json(200, modelMetadata(service, entry, version == null));
    } else if (action.equals("ready")) {
      requireGet(method);
      Readiness.Verdict ready = deps.readiness().model(service.name());
      ObjectNode out = InferBody.JSON.createObjectNode().put("name", model);
      if (version != null) {
        out.put("version", version);
      }
      call.json(HttpStatus.of(ready), HealthJson.of(ready, out));
    } else if (action.equals("infer")) {
      if (!method.equals("POST")) {
        throw new Refusal(Kind.WRONG_METHOD, "infer takes POST");
      }
      infer(call, service, resolved.pinned(), entry);
    } else {
      throw Refusal.notFound("no such endpoint");
    }
  }

  private void infer(Call call, ServiceModelEntry service, VersionEntry pinned, VersionEntry signatureOf) throws IOException {
    ServerTiming timing = deps.calls().serverTiming() ? new ServerTiming(call.exchange.receivedNanos()).handling(call.start) : null;
    InferBody.Parsed parsed;
    CompletableFuture<InferenceReply> reply;
    try {
      byte[] body = call.body(deps.calls().maxBodyBytes(), "gateway.max.body.bytes");
      parsed = InferBody.parse(body, call.header("Inference-Header-Content-Length"), signatureOf.signature(), deps.calls().json());
      reply = infer.submit(new InferService.Submit(call.requestId, new InferService.Resolved(service, signatureOf, pinned),
          parsed.inputs(), parsed.outputs(), parsed.timeoutMs(), call.header("traceparent")), timing);
    } catch (Refusal e) { // refused before producing: the answer still says how long it waited for a handler
      stamp(call, timing);
      throw e;
    }
    reply.whenComplete((answer, failure) -> {
      if (failure == null) {
        answer(call, answer, parsed, timing);
      } else if (failure instanceof Refusal e) {
        stamp(call, timing);
        call.error(HttpStatus.of(e.kind()), e.getMessage());
      } else {
        log.error("Unexpected failure of request {}", call.requestId, failure);
        call.error(500, "internal error; see the gateway log for request " + call.requestId);
      }
    });
  }

  private void answer(Call call, InferenceReply reply, InferBody.Parsed parsed, ServerTiming timing) {
    InferAnswer answer = InferAnswer.of(reply, parsed.clientId(), parsed);
    if (timing != null) {
      timing.encoded();
      stamp(call, timing);
    }
    if (answer.binary()) {
      call.exchange.getResponseHeaders().set("Inference-Header-Content-Length", Integer.toString(answer.headerLength()));
      call.bytes(200, "application/octet-stream", answer.body());
    } else {
      call.bytes(200, "application/json", answer.body());
    }
  }

  /** Puts the stages reached so far in the answer's {@code Server-Timing} header (none when off or none reached). */
  private static void stamp(Call call, ServerTiming timing) {
    if (timing != null) {
      String value = timing.header();
      if (!value.isEmpty()) {
        call.exchange.getResponseHeaders().set(ServerTiming.HTTP_HEADER, value);
      }
    }
  }

  static String presentedKey(Call call) {
    return ApiKeys.presented(call.header("Authorization"), call.header("X-API-Key"));
  }

  private void authorize(String key, String model) {
    infer.authorize(key, model);
  }

  private JsonNode serverMetadata() {
    ObjectNode out = InferBody.JSON.createObjectNode();
    out.put("name", "partita");
    String version = HttpApi.class.getPackage().getImplementationVersion();
    out.put("version", version == null ? "development" : version);
    ArrayNode extensions = out.putArray("extensions");
    extensions.add("binary_tensor_data");
    if (deps.jobs() != null) {
      extensions.add("partita_jobs");
    }
    return out;
  }

  private JsonNode modelMetadata(ServiceModelEntry service, VersionEntry version, boolean allVersions) {
    ModelEntry model = deps.catalog().current().models().get(service.baseModel());
    if (model == null) { // withdrawn since the call was resolved
      throw Refusal.notFound("model '" + SafeText.name(service.name()) + "' is no longer offered");
    }
    ObjectNode out = InferBody.JSON.createObjectNode();
    out.put("name", service.name());
    ArrayNode versions = out.putArray("versions");
    if (allVersions) {
      model.versions().keySet().forEach(versions::add);
    } else {
      versions.add(version.version());
    }
    out.put("platform", "onnxruntime_onnx");
    out.put("base_model", service.baseModel());
    ArrayNode inputs = out.putArray("inputs");
    version.signature().inputs().forEach(s -> inputs.add(spec(s)));
    ArrayNode outputs = out.putArray("outputs");
    version.signature().outputs().forEach(s -> outputs.add(spec(s)));
    return out;
  }

  private static JsonNode spec(TensorSpec s) {
    ObjectNode n = InferBody.JSON.createObjectNode();
    n.put("name", s.name());
    n.put("datatype", s.type().oipDatatype());
    ArrayNode shape = n.putArray("shape");
    s.shape().forEach(shape::add);
    return n;
  }

  static void requireGet(String method) {
    if (!method.equals("GET") && !method.equals("HEAD")) {
      throw new Refusal(Kind.WRONG_METHOD, "this endpoint takes GET");
    }
  }
}

package io.partita.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.gateway.auth.ApiKeys;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.routing.NotRoutableException;
import io.partita.gateway.routing.Routing;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Open Inference Protocol v2 HTTP endpoints, {@code /metrics}, and (through {@link JobsApi}) the
 * batch job endpoints. Everything from outside is checked before anything is produced, in this
 * order: API key (401, 403), model and version (404), body size (413), body content (400, naming
 * the field), then routing (503 when the service model has no route or no ready instance, with
 * {@code gateway.routing=plan}), then the in-flight limit (429 with {@code Retry-After}). An infer call registers its
 * waiter before producing, answers 504 at its deadline and always gives its slot back; an error
 * reply becomes the matching HTTP status with the worker's message. No answer carries a stack trace
 * or a file path.
 */
public final class HttpApi implements HttpHandler {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  /**
   * What the endpoints need.
   *
   * @param ready whether the gateway can take infer calls (its reply topic is being read and, with
   *     {@code gateway.routing=plan}, its route table has caught up)
   * @param jobs the batch job endpoints, or null when jobs are off
   */
  public record Deps(RepositoryIndex index, RequestProducer requests, Capacity capacity, ApiKeys keys,
      GatewayMetrics metrics, JobsApi jobs, BooleanSupplier ready, long defaultTimeoutMs, long maxBodyBytes,
      int retryAfterSeconds) {}

  private final Deps deps;

  public HttpApi(Deps deps) {
    this.deps = deps;
  }

  @Override
  public void handle(HttpExchange exchange) {
    String requestId = exchange.getRequestHeaders().getFirst("X-Request-Id");
    if (requestId == null || requestId.isBlank() || requestId.length() > 128 || !requestId.matches("[\\x21-\\x7e]+")) {
      requestId = UUID.randomUUID().toString();
    }
    exchange.getResponseHeaders().set("X-Request-Id", requestId);
    Call call = new Call(exchange, requestId, deps.metrics());
    try {
      route(call);
    } catch (HttpError e) {
      if (e.status() == 429) {
        exchange.getResponseHeaders().set("Retry-After", Integer.toString(deps.retryAfterSeconds()));
      }
      call.error(e.status(), e.getMessage());
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
    String[] p = path.replaceAll("/+$", "").split("/");
    // p[0] is "" (leading slash)
    if (p.length < 2 || !p[1].equals("v2")) {
      throw HttpError.notFound("no such endpoint; the API lives under /v2");
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
      boolean ready = deps.ready().getAsBoolean();
      switch (p[3]) {
        case "live" -> call.json(200, InferBody.JSON.createObjectNode().put("live", true));
        case "ready" -> call.json(ready ? 200 : 503, InferBody.JSON.createObjectNode().put("ready", ready));
        default -> throw HttpError.notFound("no such endpoint");
      }
      return;
    }
    if (p[2].equals("jobs")) {
      call.endpoint = "jobs";
      if (deps.jobs() == null) {
        throw HttpError.notFound("batch jobs are off on this gateway (gateway.jobs.enabled=false)");
      }
      deps.jobs().handle(call, p, presentedKey(call));
      return;
    }
    if (p[2].equals("models")) {
      models(call, p);
      return;
    }
    throw HttpError.notFound("no such endpoint");
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
      deps.index().serviceModels().values().forEach(s -> {
        if (deps.keys().check(key, s.name()).allowed()) {
          ObjectNode m = models.addObject().put("name", s.name()).put("base_model", s.baseModel());
          ArrayNode versions = m.putArray("versions");
          deps.index().models().get(s.baseModel()).versions().keySet().forEach(versions::add);
          m.put("ready", modelReady(s.name()));
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
      throw HttpError.notFound("no such endpoint");
    }
    authorize(key, model);
    ServiceModelEntry service = serviceModel(model);
    call.model = service.name();
    VersionEntry entry = version(service, version);
    if (action == null) {
      requireGet(method);
      call.json(200, modelMetadata(service, entry, version == null));
    } else if (action.equals("ready")) {
      requireGet(method);
      boolean ready = modelReady(service.name());
      ObjectNode out = InferBody.JSON.createObjectNode().put("name", model);
      if (version != null) {
        out.put("version", version);
      }
      call.json(ready ? 200 : 503, out.put("ready", ready));
    } else if (action.equals("infer")) {
      if (!method.equals("POST")) {
        throw new HttpError(405, "infer takes POST");
      }
      infer(call, service, version == null ? null : entry, entry);
    } else {
      throw HttpError.notFound("no such endpoint");
    }
  }

  /** Ready: the gateway takes calls and (with {@code gateway.routing=plan}) the model has a ready instance. */
  private boolean modelReady(String serviceModel) {
    return deps.ready().getAsBoolean() && deps.requests().routing().ready(serviceModel);
  }

  private void infer(Call call, ServiceModelEntry service, VersionEntry pinned, VersionEntry signatureOf) throws IOException {
    byte[] body = call.body(deps.maxBodyBytes(), "gateway.max.body.bytes");
    InferBody.Parsed parsed = InferBody.parse(body, call.header("Inference-Header-Content-Length"), signatureOf.signature());
    long timeoutMs = parsed.timeoutMs() == null ? deps.defaultTimeoutMs() : Math.min(parsed.timeoutMs(), deps.defaultTimeoutMs() * 10);
    Routing.Target target;
    try {
      target = deps.requests().routing().choose(service.name());
    } catch (NotRoutableException e) {
      throw new HttpError(503, e.getMessage());
    }
    if (!deps.capacity().tryOnline()) {
      throw new HttpError(429, "the gateway has " + deps.capacity().limit() + " requests in flight (gateway.max.in.flight); try again shortly");
    }
    InferenceRequest request = InferenceRequest.newBuilder()
        .setId(call.requestId)
        .setServiceModel(service.name())
        .setVersion(pinned == null ? null : pinned.version())
        .setInputs(parsed.inputs())
        .setOutputs(parsed.outputs())
        .build();
    try {
      deps.requests().send(request, timeoutMs, call.header("traceparent"), target).whenComplete((reply, failure) -> {
        deps.capacity().releaseOnline();
        if (failure != null) {
          Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
          if (cause instanceof TimeoutException) {
            call.error(504, "no reply before the deadline (" + timeoutMs + " ms); the request may still run");
          } else if (cause instanceof IllegalStateException && cause.getMessage() != null && cause.getMessage().contains("already in flight")) {
            call.error(409, "a request with X-Request-Id " + call.requestId + " is already in flight; use a new id");
          } else {
            log.warn("Request {} could not be produced: {}", call.requestId, cause.toString());
            call.error(503, "the request could not be queued: " + cause.getClass().getSimpleName());
          }
        } else {
          answer(call, reply, parsed);
        }
      });
    } catch (IllegalStateException e) {
      deps.capacity().releaseOnline();
      throw new HttpError(409, "a request with X-Request-Id " + call.requestId + " is already in flight; use a new id");
    }
  }

  private void answer(Call call, InferenceReply reply, InferBody.Parsed parsed) {
    if (reply.getError() != null) {
      call.error(statusOf(reply.getError().getCode()), SafeText.clean(reply.getError().getMessage()));
      return;
    }
    InferAnswer answer = InferAnswer.of(reply, parsed.clientId(), parsed);
    if (answer.binary()) {
      call.exchange.getResponseHeaders().set("Inference-Header-Content-Length", Integer.toString(answer.headerLength()));
      call.bytes(200, "application/octet-stream", answer.body());
    } else {
      call.bytes(200, "application/json", answer.body());
    }
  }

  /** The HTTP status for an error reply's code. */
  public static int statusOf(ErrorCode code) {
    return switch (code) {
      case BAD_INPUT -> 400;
      case NOT_FOUND -> 404;
      case NOT_READY -> 503;
      case DEADLINE_EXCEEDED -> 504;
      case OVERLOADED -> 429;
      case MODEL_ERROR, UNKNOWN -> 500;
    };
  }

  static String presentedKey(Call call) {
    return ApiKeys.presented(call.header("Authorization"), call.header("X-API-Key"));
  }

  private void authorize(String key, String model) {
    ApiKeys.Decision decision = deps.keys().check(key, model);
    if (!decision.allowed()) {
      throw new HttpError(decision.status(), decision.message());
    }
  }

  private ServiceModelEntry serviceModel(String name) {
    ServiceModelEntry service = deps.index().serviceModels().get(name);
    if (service == null) {
      throw HttpError.notFound("model '" + name + "' is not known; known models: " + deps.index().serviceModels().keySet());
    }
    return service;
  }

  private VersionEntry version(ServiceModelEntry service, String version) {
    ModelEntry model = deps.index().models().get(service.baseModel());
    if (version == null) {
      return model.latest();
    }
    return model.version(version).orElseThrow(() -> HttpError.notFound(
        "version '" + version + "' of model '" + service.name() + "' does not exist; versions: " + model.versions().keySet()));
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
    ModelEntry model = deps.index().models().get(service.baseModel());
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
      throw new HttpError(405, "this endpoint takes GET");
    }
  }
}

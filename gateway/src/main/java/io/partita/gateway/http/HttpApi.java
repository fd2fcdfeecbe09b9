package io.partita.gateway.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import io.partita.models.tensor.TensorValidator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Open Inference Protocol v2 HTTP/JSON endpoints. Everything from outside is checked before
 * anything is produced: unknown model 404; wrong input name, datatype, shape or data length 400
 * naming the field; oversize body 413. An infer call registers its waiter before producing,
 * answers 504 at its deadline and always removes the waiter; an error reply becomes the matching
 * HTTP error with the worker's message. No answer carries a stack trace or a file path.
 */
public final class HttpApi implements HttpHandler {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final RepositoryIndex index;
  private final RequestProducer requests;
  private final long defaultTimeoutMs;
  private final long maxBodyBytes;

  public HttpApi(RepositoryIndex index, RequestProducer requests, long defaultTimeoutMs, long maxBodyBytes) {
    this.index = index;
    this.requests = requests;
    this.defaultTimeoutMs = defaultTimeoutMs;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void handle(HttpExchange exchange) {
    String requestId = exchange.getRequestHeaders().getFirst("X-Request-Id");
    if (requestId == null || requestId.isBlank() || requestId.length() > 128) {
      requestId = UUID.randomUUID().toString();
    }
    exchange.getResponseHeaders().set("X-Request-Id", requestId);
    try {
      route(exchange, requestId);
    } catch (HttpError e) {
      send(exchange, e.status(), error(e.getMessage()));
    } catch (RuntimeException | IOException e) {
      log.error("Unexpected failure on {} {}", exchange.getRequestMethod(), exchange.getRequestURI().getPath(), e);
      send(exchange, 500, error("internal error; see the gateway log for request " + requestId));
    }
  }

  private void route(HttpExchange exchange, String requestId) throws IOException {
    String method = exchange.getRequestMethod();
    String[] p = exchange.getRequestURI().getPath().replaceAll("/+$", "").split("/");
    // p[0] is "" (leading slash)
    if (p.length < 2 || !p[1].equals("v2")) {
      throw HttpError.notFound("no such endpoint; the API lives under /v2");
    }
    if (p.length == 2) {
      requireGet(method);
      send(exchange, 200, serverMetadata());
      return;
    }
    if (p.length == 4 && p[2].equals("health")) {
      requireGet(method);
      switch (p[3]) {
        case "live" -> send(exchange, 200, JSON.createObjectNode().put("live", true));
        case "ready" -> send(exchange, 200, JSON.createObjectNode().put("ready", true));
        default -> throw HttpError.notFound("no such endpoint");
      }
      return;
    }
    if (p.length >= 4 && p[2].equals("models")) {
      String model = p[3];
      String version = null;
      int next = 4;
      if (p.length >= 6 && p[4].equals("versions")) {
        version = p[5];
        next = 6;
      }
      String action = p.length > next ? p[next] : null;
      if (p.length > next + 1) {
        throw HttpError.notFound("no such endpoint");
      }
      ServiceModelEntry service = serviceModel(model);
      VersionEntry entry = version(service, version);
      if (action == null) {
        requireGet(method);
        send(exchange, 200, modelMetadata(service, entry, version == null));
      } else if (action.equals("ready")) {
        requireGet(method);
        send(exchange, 200, JSON.createObjectNode().put("name", model).put("ready", true));
      } else if (action.equals("infer")) {
        if (!method.equals("POST")) {
          throw new HttpError(405, "infer takes POST");
        }
        infer(exchange, requestId, service, version == null ? null : entry);
      } else {
        throw HttpError.notFound("no such endpoint");
      }
      return;
    }
    throw HttpError.notFound("no such endpoint");
  }

  private void infer(HttpExchange exchange, String requestId, ServiceModelEntry service, VersionEntry pinned) throws IOException {
    JsonNode body = readJson(exchange);
    JsonNode inputsNode = body.get("inputs");
    if (inputsNode == null || !inputsNode.isArray() || inputsNode.isEmpty()) {
      throw HttpError.badRequest("inputs: missing or empty; send an array of tensors");
    }
    List<Tensor> inputs = new ArrayList<>();
    for (int i = 0; i < inputsNode.size(); i++) {
      inputs.add(JsonTensors.parse(inputsNode.get(i), i));
    }
    VersionEntry version = pinned != null ? pinned : index.models().get(service.baseModel()).latest();
    Map<String, TensorSpec> specs = new LinkedHashMap<>();
    version.signature().inputs().forEach(s -> specs.put(s.name(), s));
    String problem = TensorValidator.check(specs, inputs.stream()
        .map(t -> new TensorValidator.Sent(t.getName(), t.getDatatype(), t.getShape(), t.getData().remaining())).toList());
    if (problem != null) {
      throw HttpError.badRequest(problem);
    }
    List<String> outputs = new ArrayList<>();
    JsonNode outputsNode = body.get("outputs");
    if (outputsNode != null) {
      if (!outputsNode.isArray()) {
        throw HttpError.badRequest("outputs: must be an array of {\"name\": ...}");
      }
      for (int i = 0; i < outputsNode.size(); i++) {
        String name = outputsNode.get(i).path("name").asText("");
        if (version.signature().output(name).isEmpty()) {
          throw HttpError.badRequest("outputs[" + i + "].name: unknown output '" + name + "'");
        }
        outputs.add(name);
      }
    }
    long timeoutMs = defaultTimeoutMs;
    JsonNode timeout = body.path("parameters").get("timeout_ms");
    if (timeout != null) {
      if (!timeout.isIntegralNumber() || timeout.asLong() <= 0) {
        throw HttpError.badRequest("parameters.timeout_ms: must be a whole number > 0");
      }
      timeoutMs = Math.min(timeout.asLong(), defaultTimeoutMs * 10);
    }
    String clientId = body.path("id").isTextual() ? body.get("id").asText() : null;
    InferenceRequest request = InferenceRequest.newBuilder()
        .setId(requestId)
        .setServiceModel(service.name())
        .setVersion(pinned == null ? null : pinned.version())
        .setInputs(inputs)
        .setOutputs(outputs)
        .build();
    String traceparent = exchange.getRequestHeaders().getFirst("traceparent");
    requests.send(request, timeoutMs, traceparent).whenComplete((reply, failure) -> {
      if (failure != null) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (cause instanceof TimeoutException) {
          send(exchange, 504, error("no reply before the deadline; the request may still run"));
        } else {
          log.warn("Request {} could not be produced: {}", requestId, cause.toString());
          send(exchange, 503, error("the request could not be queued: " + cause.getClass().getSimpleName()));
        }
      } else {
        answer(exchange, reply, clientId);
      }
    });
  }

  private void answer(HttpExchange exchange, InferenceReply reply, String clientId) {
    if (reply.getError() != null) {
      send(exchange, statusOf(reply.getError().getCode()), error(reply.getError().getMessage()));
      return;
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("model_name", reply.getServiceModel());
    if (reply.getModelVersion() != null) {
      out.put("model_version", reply.getModelVersion());
    }
    out.put("id", clientId != null ? clientId : reply.getId());
    ArrayNode outputs = out.putArray("outputs");
    reply.getOutputs().forEach(t -> outputs.add(JsonTensors.toJson(t)));
    send(exchange, 200, out);
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

  private JsonNode readJson(HttpExchange exchange) throws IOException {
    String length = exchange.getRequestHeaders().getFirst("Content-Length");
    if (length != null) {
      try {
        if (Long.parseLong(length.strip()) > maxBodyBytes) {
          throw new HttpError(413, "body over the limit of " + maxBodyBytes + " bytes");
        }
      } catch (NumberFormatException e) {
        throw HttpError.badRequest("Content-Length: not a number");
      }
    }
    byte[] bytes;
    try (InputStream in = exchange.getRequestBody()) {
      bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBodyBytes + 1));
    }
    if (bytes.length > maxBodyBytes) {
      throw new HttpError(413, "body over the limit of " + maxBodyBytes + " bytes");
    }
    try {
      JsonNode node = JSON.readTree(bytes);
      if (node == null || !node.isObject()) {
        throw HttpError.badRequest("body: expected a JSON object");
      }
      return node;
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw HttpError.badRequest("body: not valid JSON (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")");
    }
  }

  private ServiceModelEntry serviceModel(String name) {
    ServiceModelEntry service = index.serviceModels().get(name);
    if (service == null) {
      throw HttpError.notFound("model '" + name + "' is not known; known models: " + index.serviceModels().keySet());
    }
    return service;
  }

  private VersionEntry version(ServiceModelEntry service, String version) {
    ModelEntry model = index.models().get(service.baseModel());
    if (version == null) {
      return model.latest();
    }
    return model.version(version).orElseThrow(() -> HttpError.notFound(
        "version '" + version + "' of model '" + service.name() + "' does not exist; versions: " + model.versions().keySet()));
  }

  private JsonNode serverMetadata() {
    ObjectNode out = JSON.createObjectNode();
    out.put("name", "partita");
    out.put("version", String.valueOf(HttpApi.class.getPackage().getImplementationVersion()));
    out.putArray("extensions");
    return out;
  }

  private JsonNode modelMetadata(ServiceModelEntry service, VersionEntry version, boolean allVersions) {
    ModelEntry model = index.models().get(service.baseModel());
    ObjectNode out = JSON.createObjectNode();
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
    ObjectNode n = JSON.createObjectNode();
    n.put("name", s.name());
    n.put("datatype", s.type().oipDatatype());
    ArrayNode shape = n.putArray("shape");
    s.shape().forEach(shape::add);
    return n;
  }

  private static void requireGet(String method) {
    if (!method.equals("GET") && !method.equals("HEAD")) {
      throw new HttpError(405, "this endpoint takes GET");
    }
  }

  private static JsonNode error(String message) {
    return JSON.createObjectNode().put("error", message);
  }

  private static void send(HttpExchange exchange, int status, JsonNode body) {
    try (exchange) {
      byte[] bytes = JSON.writeValueAsBytes(body);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    } catch (IOException e) {
      log.debug("Client went away before its answer: {}", e.getMessage());
    }
  }
}

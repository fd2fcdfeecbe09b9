package io.partita.common.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;

/**
 * A small client of the Confluent-compatible schema registry API (served by Apicurio Registry at
 * {@code /apis/ccompat/v7}, and by Confluent Schema Registry at its root): registers a schema under
 * a subject and resolves schema ids, caching both, since a schema id never changes meaning. Only
 * what the codecs need; thread safe.
 */
public final class SchemaRegistryClient {
  private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final RegistrySettings settings;
  private final HttpClient http;
  private final Map<String, Integer> idsBySubjectAndSchema = new ConcurrentHashMap<>();
  private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();
  private final Map<String, Boolean> compatibilitySet = new ConcurrentHashMap<>();

  public SchemaRegistryClient(RegistrySettings settings) {
    this.settings = settings;
    this.http = HttpClient.newBuilder().connectTimeout(settings.timeout()).build();
  }

  public RegistrySettings settings() {
    return settings;
  }

  /**
   * The id of {@code schema} under {@code subject}: registered there when new (auto-register), or
   * looked up. The registry checks the subject's compatibility rule; a refusal throws with status 409.
   */
  public int idOf(String subject, Schema schema) {
    String key = subject + '\u0000' + schema.toString();
    Integer cached = idsBySubjectAndSchema.get(key);
    if (cached != null) {
      return cached;
    }
    int id = settings.autoRegister() ? register(subject, schema) : lookUp(subject, schema);
    idsBySubjectAndSchema.put(key, id);
    schemasById.putIfAbsent(id, schema);
    return id;
  }

  /** Registers a schema under a subject and returns its id; 409 when the subject's rule refuses it. */
  public int register(String subject, Schema schema) {
    ensureCompatibility(subject);
    JsonNode body = send("POST", "/subjects/" + encode(subject) + "/versions", schemaBody(schema),
        "register the schema of " + schema.getFullName() + " under subject " + subject).orElseThrow();
    return body.path("id").asInt();
  }

  private int lookUp(String subject, Schema schema) {
    Optional<JsonNode> body = send("POST", "/subjects/" + encode(subject), schemaBody(schema),
        "look up the schema of " + schema.getFullName() + " under subject " + subject);
    return body.orElseThrow(() -> new SchemaRegistryException(
        "subject " + subject + " in the registry at " + settings.url() + " does not hold this schema of " + schema.getFullName()
            + " and " + RegistrySettings.AUTO_REGISTER + "=false: register it first", 404, null)).path("id").asInt();
  }

  /** The schema with this id, or empty when the registry has no such id. */
  public Optional<Schema> schema(int id) {
    Schema cached = schemasById.get(id);
    if (cached != null) {
      return Optional.of(cached);
    }
    Optional<JsonNode> body = send("GET", "/schemas/ids/" + id, null, "fetch schema id " + id);
    if (body.isEmpty()) {
      return Optional.empty();
    }
    String type = body.get().path("schemaType").asText("AVRO");
    if (!type.equals("AVRO")) {
      throw new SchemaRegistryException("schema id " + id + " in the registry at " + settings.url() + " is " + type + ", not AVRO", 200, null);
    }
    Schema schema = new Schema.Parser().parse(body.get().path("schema").asText());
    schemasById.putIfAbsent(id, schema);
    return Optional.of(schemasById.get(id));
  }

  /** Sets a subject's compatibility level (BACKWARD, FULL, ...). */
  public void setCompatibility(String subject, String level) {
    send("PUT", "/config/" + encode(subject), JSON.createObjectNode().put("compatibility", level).toString(),
        "set compatibility " + level + " on subject " + subject).orElseThrow();
  }

  private void ensureCompatibility(String subject) {
    if (settings.compatibility().equals(RegistrySettings.KEEP) || compatibilitySet.containsKey(subject)) {
      return;
    }
    setCompatibility(subject, settings.compatibility());
    compatibilitySet.put(subject, true);
  }

  private static String schemaBody(Schema schema) {
    return JSON.createObjectNode().put("schemaType", "AVRO").put("schema", schema.toString()).toString();
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Sends one request; a 404 is empty, any other failure throws naming what was tried. */
  private Optional<JsonNode> send(String method, String path, String body, String what) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(settings.url() + path))
        .timeout(settings.timeout())
        .header("Accept", CONTENT_TYPE + ", application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      request.header("Content-Type", CONTENT_TYPE);
    }
    if (settings.username() != null) {
      String token = Base64.getEncoder().encodeToString((settings.username() + ":" + settings.password()).getBytes(StandardCharsets.UTF_8));
      request.header("Authorization", "Basic " + token);
    }
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new SchemaRegistryException("cannot " + what + ": the registry at " + settings.url() + " (" + RegistrySettings.URL
          + ") is not reachable: " + e, -1, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SchemaRegistryException("interrupted while trying to " + what, -1, e);
    }
    int status = response.statusCode();
    if (status == 404) {
      return Optional.empty();
    }
    if (status / 100 != 2) {
      String detail = response.body();
      try {
        detail = JSON.readTree(detail).path("message").asText(detail);
      } catch (IOException e) {
        // not JSON: keep the raw body
      }
      String hint = status == 409 ? " (incompatible with the subject's earlier schemas under its compatibility rule)"
          : status == 401 || status == 403 ? " (check " + RegistrySettings.USERNAME + " and " + RegistrySettings.PASSWORD + ")" : "";
      throw new SchemaRegistryException("cannot " + what + ": the registry at " + settings.url() + " answered HTTP " + status + hint + ": " + detail, status, null);
    }
    try {
      return Optional.of(JSON.readTree(response.body()));
    } catch (IOException e) {
      throw new SchemaRegistryException("cannot " + what + ": the registry at " + settings.url() + " answered something that is not JSON", status, e);
    }
  }
}

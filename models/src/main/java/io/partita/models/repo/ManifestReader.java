package io.partita.models.repo;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Reads a model manifest ({@code model.yaml}, {@code model.yml} or {@code model.json} in a model's
 * directory) with Jackson and checks its shape field by field. Every error is a {@link
 * RepositoryException} naming the file and the dotted field ({@code versions.2.precision}); unknown
 * fields are errors too, so a typo does not silently fall back to a default.
 */
public final class ManifestReader {

  /** Manifest file names, in the order they are looked for. At most one may exist. */
  public static final List<String> FILE_NAMES = List.of("model.yaml", "model.yml", "model.json");

  private static final Set<String> TOP_FIELDS = Set.of("description", "versions", "serviceModels");
  private static final Set<String> VERSION_FIELDS =
      Set.of("precision", "providers", "accuracy", "memoryBytes", "sha256");
  private static final Set<String> SERVICE_FIELDS = Set.of("weightFile", "sha256", "instances", "objective",
      "latencyObjectiveMs", "minAccuracy", "memoryCapBytes");
  /** The most instances a manifest may ask for one service model (a typo's guard, not a limit of the planner). */
  static final int MAX_INSTANCES = 1024;

  private static final ObjectMapper YAML = configure(new ObjectMapper(new YAMLFactory()));
  private static final ObjectMapper JSON = configure(new ObjectMapper());

  private ManifestReader() {}

  /** The manifest of the model in {@code modelDir}, or empty if it has none. */
  public static Optional<ModelManifest> readFrom(Path modelDir) {
    List<Path> found = new ArrayList<>();
    for (String name : FILE_NAMES) {
      Path p = modelDir.resolve(name);
      if (Files.isRegularFile(p)) {
        found.add(p);
      }
    }
    if (found.size() > 1) {
      throw new RepositoryException(
          modelDir, null, "more than one manifest " + found.stream().map(Path::getFileName).toList()
              + "; keep exactly one");
    }
    return found.isEmpty() ? Optional.empty() : Optional.of(read(found.get(0)));
  }

  /** Parses one manifest file. */
  public static ModelManifest read(Path file) {
    JsonNode root;
    try {
      ObjectMapper mapper = file.getFileName().toString().endsWith(".json") ? JSON : YAML;
      root = mapper.readTree(file.toFile());
    } catch (JsonProcessingException e) {
      throw new RepositoryException(file, null, "not valid YAML/JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new RepositoryException(file, null, "cannot be read: " + e, e);
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      return new ModelManifest(file, Map.of(), Map.of());
    }
    requireObject(file, "(top level)", root);
    checkFields(file, null, root, TOP_FIELDS);
    JsonNode description = root.get("description");
    if (description != null && !description.isTextual()) {
      throw new RepositoryException(file, "description", "must be a string");
    }

    Map<String, ModelManifest.Version> versions = new LinkedHashMap<>();
    JsonNode vs = root.get("versions");
    if (vs != null && !vs.isNull()) {
      requireObject(file, "versions", vs);
      for (Iterator<Map.Entry<String, JsonNode>> it = vs.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        String field = "versions." + e.getKey();
        if (!Names.isValid(e.getKey())) {
          throw new RepositoryException(file, field, "version id must be " + Names.rule());
        }
        versions.put(e.getKey(), version(file, field, e.getValue()));
      }
    }

    Map<String, ModelManifest.ServiceModel> services = new LinkedHashMap<>();
    JsonNode ss = root.get("serviceModels");
    if (ss != null && !ss.isNull()) {
      requireObject(file, "serviceModels", ss);
      for (Iterator<Map.Entry<String, JsonNode>> it = ss.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        String field = "serviceModels." + e.getKey();
        if (!Names.isValid(e.getKey())) {
          throw new RepositoryException(file, field, "service model name must be " + Names.rule());
        }
        services.put(e.getKey(), serviceModel(file, field, e.getValue()));
      }
    }
    return new ModelManifest(file, versions, services);
  }

  private static ModelManifest.Version version(Path file, String field, JsonNode node) {
    ModelManifest.Version d = ModelManifest.Version.defaults();
    if (node == null || node.isNull()) {
      return d;
    }
    requireObject(file, field, node);
    checkFields(file, field, node, VERSION_FIELDS);

    Precision precision = d.precision();
    JsonNode p = node.get("precision");
    if (p != null) {
      String text = p.isTextual() ? p.asText() : p.toString();
      precision =
          Precision.parse(text)
              .orElseThrow(
                  () ->
                      new RepositoryException(
                          file,
                          field + ".precision",
                          "'" + text + "' is not one of " + Precision.choices()));
    }

    List<String> providers = d.providers();
    JsonNode pr = node.get("providers");
    if (pr != null) {
      if (!pr.isArray() || pr.isEmpty()) {
        throw new RepositoryException(
            file, field + ".providers", "must be a non-empty list such as [CPU] or [CUDA, CPU]");
      }
      providers = new ArrayList<>();
      for (int i = 0; i < pr.size(); i++) {
        JsonNode v = pr.get(i);
        String name = v.asText();
        if (!v.isTextual() || !isProvider(name)) {
          throw new RepositoryException(
              file,
              field + ".providers[" + i + "]",
              "'" + v.asText() + "' is not an ONNX Runtime provider; use one of "
                  + ExecutionProviders.NAMES);
        }
        providers.add(name);
      }
    }

    OptionalDouble accuracy = number(file, field + ".accuracy", node.get("accuracy"));
    OptionalLong memory = bytes(file, field + ".memoryBytes", node.get("memoryBytes"));

    Optional<String> sha = Optional.empty();
    if (node.has("sha256")) {
      sha = Optional.of(sha256(file, field + ".sha256", node.get("sha256")));
    }
    return new ModelManifest.Version(precision, providers, accuracy, memory, sha);
  }

  private static ModelManifest.ServiceModel serviceModel(Path file, String field, JsonNode node) {
    if (node == null || node.isNull()) {
      return new ModelManifest.ServiceModel(Optional.empty(), Optional.empty());
    }
    requireObject(file, field, node);
    checkFields(file, field, node, SERVICE_FIELDS);
    int instances = instances(file, field + ".instances", node.get("instances"));
    ServiceRequirements requirements = requirements(file, field, node);
    JsonNode wf = node.get("weightFile");
    JsonNode sha = node.get("sha256");
    if (wf == null || wf.isNull()) {
      if (sha != null) {
        throw new RepositoryException(
            file, field + ".sha256", "is set but there is no weightFile to check it against");
      }
      return new ModelManifest.ServiceModel(Optional.empty(), Optional.empty(), instances, requirements);
    }
    if (!wf.isTextual() || wf.asText().isBlank()) {
      throw new RepositoryException(
          file, field + ".weightFile", "must be a path relative to the repository root");
    }
    if (sha == null) {
      throw new RepositoryException(
          file, field + ".sha256", "is required with a weightFile (64 lowercase hex characters)");
    }
    return new ModelManifest.ServiceModel(
        Optional.of(wf.asText()), Optional.of(sha256(file, field + ".sha256", sha)), instances, requirements);
  }

  /** A service model's requirements on the version a host runs; absent fields require nothing. */
  private static ServiceRequirements requirements(Path file, String field, JsonNode node) {
    String objective = ServiceRequirements.LATENCY;
    JsonNode o = node.get("objective");
    if (o != null) {
      if (!o.isTextual() || !ServiceRequirements.OBJECTIVES.contains(o.asText())) {
        throw new RepositoryException(file, field + ".objective",
            "'" + o.asText() + "' is not one of " + ServiceRequirements.OBJECTIVES
                + " (accuracy: the most accurate version that meets latencyObjectiveMs on the host)");
      }
      objective = o.asText();
    }
    OptionalDouble latency = OptionalDouble.empty();
    JsonNode l = node.get("latencyObjectiveMs");
    if (l != null) {
      if (!l.isNumber() || !Double.isFinite(l.asDouble()) || l.asDouble() <= 0) {
        throw new RepositoryException(file, field + ".latencyObjectiveMs",
            "must be a number of milliseconds > 0, got " + l);
      }
      latency = OptionalDouble.of(l.asDouble());
    }
    return new ServiceRequirements(objective, latency, number(file, field + ".minAccuracy", node.get("minAccuracy")),
        bytes(file, field + ".memoryCapBytes", node.get("memoryCapBytes")));
  }

  /** An optional finite number (an accuracy). */
  private static OptionalDouble number(Path file, String field, JsonNode node) {
    if (node == null) {
      return OptionalDouble.empty();
    }
    if (!node.isNumber() || !Double.isFinite(node.asDouble())) {
      throw new RepositoryException(file, field, "must be a number, got " + node);
    }
    return OptionalDouble.of(node.asDouble());
  }

  /** An optional positive whole number of bytes. */
  private static OptionalLong bytes(Path file, String field, JsonNode node) {
    if (node == null) {
      return OptionalLong.empty();
    }
    if (!node.canConvertToExactIntegral() || !node.canConvertToLong() || node.asLong() <= 0) {
      throw new RepositoryException(file, field, "must be a positive whole number of bytes, got " + node);
    }
    return OptionalLong.of(node.asLong());
  }

  private static int instances(Path file, String field, JsonNode node) {
    if (node == null) {
      return 1;
    }
    if (!node.canConvertToExactIntegral() || !node.canConvertToInt() || node.asInt() < 1 || node.asInt() > MAX_INSTANCES) {
      throw new RepositoryException(
          file, field, "must be a whole number of instances from 1 to " + MAX_INSTANCES + ", got " + node);
    }
    return node.asInt();
  }

  private static String sha256(Path file, String field, JsonNode node) {
    String s = node == null ? "null" : node.asText();
    if (node != null && node.isNumber()) {
      throw new RepositoryException(
          file, field, "'" + s + "' was read as a number; quote the sha256 in YAML (\"...\")");
    }
    if (node == null || !node.isTextual() || !Sha256.isValid(s)) {
      throw new RepositoryException(
          file, field, "'" + s + "' is not a sha256 (expected 64 lowercase hex characters)");
    }
    return s;
  }

  private static boolean isProvider(String name) {
    return ExecutionProviders.isKnown(name);
  }

  private static void requireObject(Path file, String field, JsonNode node) {
    if (!node.isObject()) {
      throw new RepositoryException(file, field, "must be a mapping, got " + node.getNodeType());
    }
  }

  private static void checkFields(Path file, String field, JsonNode node, Set<String> allowed) {
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!allowed.contains(name)) {
        throw new RepositoryException(
            file,
            field == null ? name : field + "." + name,
            "unknown field; allowed here: " + allowed.stream().sorted().toList());
      }
    }
  }

  private static ObjectMapper configure(ObjectMapper m) {
    m.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    return m;
  }
}

package io.partita.planning.cli;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.planning.ProfilePoint;
import io.partita.planning.grouping.GroupingObjective;
import io.partita.planning.grouping.GroupingProblem;
import io.partita.planning.grouping.ModelDemand;
import io.partita.planning.grouping.PoolSplitPlan;
import io.partita.planning.grouping.PoolSplitProblem;
import io.partita.planning.grouping.PoolSplitter;
import io.partita.planning.mapping.MappingPlan;
import io.partita.planning.mapping.MappingPlanner;
import io.partita.planning.mapping.MappingProblem;
import io.partita.planning.mapping.ResourceSpec;
import io.partita.planning.mapping.ServiceSpec;
import io.partita.planning.mapping.ServiceStage;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code partita plan grouping --input FILE} and {@code partita plan mapping --input FILE}: reads a
 * problem file (format in docs/planning.md), runs the same pure planners the services use, prints
 * the plan as JSON on {@code out}. The command line itself (flags, {@code --help}) is the
 * launcher's; this class takes the parsed command and file.
 *
 * <p>Input is refused rather than guessed at: unknown fields (a typo such as {@code sloMS} would
 * silently drop a constraint), numbers outside the range the planner can use (never narrowed:
 * a {@code batchSize} of 4294967297 does not become 1), NaN and infinities, pools larger than
 * {@link GroupingProblem#MAX_POOL_SIZE}, mapping problems larger than {@link #MAX_PLACEMENTS}
 * placements or {@link #MAX_RESOURCES} resources. Each refusal is one line naming the field.
 *
 * <p>Exit codes: 0 planned; 1 the problem is valid but has no plan (a model can run nowhere, or no
 * model's share has an eligible grouping); 2 usage error, unreadable file or invalid problem, with a
 * message on {@code err} that names the field ({@code pool.size: must be > 0}).
 */
public final class PlanCli {

  public static final int OK = 0;
  public static final int NO_PLAN = 1;
  public static final int INVALID = 2;

  /** The two planning problems the command reads. */
  public enum Kind {
    GROUPING, MAPPING;

    public String word() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The largest exact bound a problem file may ask for. */
  static final int MAX_EXACT_PLACEMENTS = 14;

  /**
   * The largest mapping problem the command accepts: (service, model) placements and resources.
   * Each step of the improvement pass looks at every move and swap, {@code O(n * R + n^2)} for
   * {@code n} placements, from four starts, so the time grows about as {@code n^3}: 200 placements
   * on 32 resources take 0.1 s on an idle 2-core machine, 500 on 128 about 15 times as long, 1000
   * on 256 did not finish in minutes (figures in docs/planning.md).
   */
  public static final int MAX_PLACEMENTS = 500;

  public static final int MAX_RESOURCES = 128;

  private static final ObjectMapper JSON = JsonMapper.builder()
      .enable(SerializationFeature.INDENT_OUTPUT)
      // NaN and Infinity are read as numbers so that the refusal names the field, not a token.
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      // The plan's improvement figures print beside its cost, as documented in docs/planning.md.
      .addMixIn(MappingPlan.class, FlatImprovement.class)
      .build();

  /** Writes {@link MappingPlan#improvement()}'s fields at the plan's top level. */
  private abstract static class FlatImprovement {
    @JsonUnwrapped
    abstract MappingPlan.Improvement improvement();
  }

  private PlanCli() {}

  /** Plans the problem in {@code file}; returns the exit code. */
  public static int plan(Kind kind, Path file, PrintStream out, PrintStream err) {
    JsonNode root;
    try {
      root = JSON.readTree(Files.readString(file));
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      err.println("invalid problem " + file + ": not valid JSON" + (at == null ? "" : " at line " + at.getLineNr()
          + ", column " + at.getColumnNr()) + ": " + e.getOriginalMessage().lines().findFirst().orElse(""));
      return INVALID;
    } catch (NoSuchFileException e) {
      err.println("--input " + file + ": no such file");
      return INVALID;
    } catch (IOException e) {
      err.println("--input " + file + ": cannot be read: "
          + (Files.isDirectory(file) ? "it is a directory" : String.valueOf(e.getMessage())));
      return INVALID;
    }
    if (root == null || !root.isObject()) {
      err.println("invalid problem " + file + ": (root): must be a JSON object");
      return INVALID;
    }
    try {
      ObjectNode result = JSON.createObjectNode();
      result.put("command", kind.word());
      int code;
      if (kind == Kind.GROUPING) {
        PoolSplitPlan plan = PoolSplitter.split(readGrouping(root));
        result.set("plan", JSON.valueToTree(plan));
        code = plan.shares().stream().anyMatch(s -> s.plan().planned()) ? OK : NO_PLAN;
      } else {
        MappingPlan plan = MappingPlanner.plan(readMapping(root));
        result.set("plan", JSON.valueToTree(plan));
        code = plan.planned() ? OK : NO_PLAN;
      }
      out.println(JSON.writeValueAsString(result));
      return code;
    } catch (ProblemException | IllegalArgumentException e) {
      err.println("invalid problem " + file + ": " + e.getMessage());
      return INVALID;
    } catch (JsonProcessingException e) {
      err.println("cannot write the plan: " + e.getOriginalMessage());
      return INVALID;
    }
  }

  static PoolSplitProblem readGrouping(JsonNode root) throws ProblemException {
    Fields.onlyKnown(root, "", "pool", "objective", "models");
    JsonNode pool = Fields.object(root, "pool", "pool");
    Fields.onlyKnown(pool, "pool", "size", "memoryBytes", "bufferBytesPerPartition", "bufferThresholdBytes");
    int size = Fields.smallInteger(pool, "size", "pool.size", 1, GroupingProblem.MAX_POOL_SIZE);
    long memory = Fields.optionalInteger(pool, "memoryBytes", "pool.memoryBytes", 0, Long.MAX_VALUE, Long.MAX_VALUE);
    long buffer = Fields.optionalInteger(pool, "bufferBytesPerPartition", "pool.bufferBytesPerPartition", 0,
        Long.MAX_VALUE, 0);
    long threshold = Fields.optionalInteger(pool, "bufferThresholdBytes", "pool.bufferThresholdBytes", 0,
        Long.MAX_VALUE, Long.MAX_VALUE);
    String objectiveText = Fields.optionalText(root, "objective", "objective", "throughput");
    GroupingObjective objective;
    try {
      objective = GroupingObjective.valueOf(objectiveText.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new ProblemException("objective", "must be 'throughput' or 'latency', was '" + objectiveText + "'");
    }
    List<JsonNode> models = Fields.array(root, "models", "models", true);
    List<ModelDemand> demands = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < models.size(); i++) {
      String at = "models[" + i + "]";
      JsonNode m = models.get(i);
      if (!m.isObject()) {
        throw new ProblemException(at, "must be an object");
      }
      Fields.onlyKnown(m, at, "id", "requestsPerSecond", "batchSize", "sloMs", "profile");
      String id = Fields.text(m, "id", at + ".id");
      if (!ids.add(id)) {
        throw new ProblemException(at + ".id", "'" + id + "' is given twice");
      }
      Double rate = Fields.optionalNumber(m, "requestsPerSecond", at + ".requestsPerSecond", false, Fields.MAX_RATE);
      if (rate == null && models.size() > 1) {
        throw new ProblemException(at + ".requestsPerSecond", "is required when several models share the pool");
      }
      int batch = (int) Fields.optionalInteger(m, "batchSize", at + ".batchSize", 1, Integer.MAX_VALUE, 1);
      Double slo = Fields.optionalNumber(m, "sloMs", at + ".sloMs", true, Fields.MAX_LATENCY_MS);
      List<JsonNode> points = Fields.array(m, "profile", at + ".profile", true);
      List<ProfilePoint> profile = new ArrayList<>();
      Set<Integer> sizes = new HashSet<>();
      for (int j = 0; j < points.size(); j++) {
        String pat = at + ".profile[" + j + "]";
        JsonNode p = points.get(j);
        if (!p.isObject()) {
          throw new ProblemException(pat, "must be an object");
        }
        Fields.onlyKnown(p, pat, "size", "latencyMs", "memoryBytes");
        int k = Fields.smallInteger(p, "size", pat + ".size", 1, Integer.MAX_VALUE);
        if (!sizes.add(k)) {
          throw new ProblemException(pat + ".size", "size " + k + " is given twice");
        }
        double latency = Fields.number(p.get("latencyMs"), pat + ".latencyMs", true, Fields.MAX_LATENCY_MS);
        long mem = Fields.optionalInteger(p, "memoryBytes", pat + ".memoryBytes", 0, Long.MAX_VALUE, 0);
        profile.add(new ProfilePoint(k, latency, mem));
      }
      demands.add(new ModelDemand(id, rate == null ? 0 : rate, batch, profile, slo));
    }
    return new PoolSplitProblem(size, memory, buffer, threshold, objective, demands);
  }

  static MappingProblem readMapping(JsonNode root) throws ProblemException {
    Fields.onlyKnown(root, "", "resources", "timings", "services", "exact");
    List<JsonNode> resourceNodes = Fields.array(root, "resources", "resources", true);
    if (resourceNodes.size() > MAX_RESOURCES) {
      throw new ProblemException("resources", "at most " + MAX_RESOURCES + " resources can be mapped, found "
          + resourceNodes.size());
    }
    List<ResourceSpec> resources = new ArrayList<>();
    Set<String> resourceIds = new HashSet<>();
    Set<String> kinds = new HashSet<>();
    for (int i = 0; i < resourceNodes.size(); i++) {
      String at = "resources[" + i + "]";
      JsonNode r = resourceNodes.get(i);
      if (!r.isObject()) {
        throw new ProblemException(at, "must be an object");
      }
      Fields.onlyKnown(r, at, "id", "kind");
      String id = Fields.text(r, "id", at + ".id");
      if (!resourceIds.add(id)) {
        throw new ProblemException(at + ".id", "'" + id + "' is given twice");
      }
      String kind = Fields.text(r, "kind", at + ".kind");
      kinds.add(kind);
      resources.add(new ResourceSpec(id, kind));
    }
    if (kinds.size() < 2) {
      throw new ProblemException("resources", "must span at least two kinds (e.g. cpu and gpu), found " + kinds);
    }
    JsonNode timings = Fields.object(root, "timings", "timings");
    Map<String, Map<String, Double>> matrix = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = timings.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> row = it.next();
      String at = "timings." + row.getKey();
      if (!row.getValue().isObject()) {
        throw new ProblemException(at, "must be an object of resource id to latency in ms");
      }
      Map<String, Double> cells = new LinkedHashMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> c = row.getValue().fields(); c.hasNext(); ) {
        Map.Entry<String, JsonNode> cell = c.next();
        String cat = at + "." + cell.getKey();
        if (!resourceIds.contains(cell.getKey())) {
          throw new ProblemException(cat, "unknown resource '" + cell.getKey() + "'");
        }
        if (cell.getValue().isNull()) {
          continue;
        }
        cells.put(cell.getKey(), Fields.number(cell.getValue(), cat, true, Fields.MAX_LATENCY_MS));
      }
      matrix.put(row.getKey(), cells);
    }
    List<JsonNode> serviceNodes = Fields.array(root, "services", "services", true);
    List<ServiceSpec> services = new ArrayList<>();
    Set<String> serviceIds = new HashSet<>();
    int placements = 0;
    for (int i = 0; i < serviceNodes.size(); i++) {
      String at = "services[" + i + "]";
      JsonNode s = serviceNodes.get(i);
      if (!s.isObject()) {
        throw new ProblemException(at, "must be an object");
      }
      Fields.onlyKnown(s, at, "id", "models");
      String id = Fields.text(s, "id", at + ".id");
      if (!serviceIds.add(id)) {
        throw new ProblemException(at + ".id", "'" + id + "' is given twice");
      }
      List<JsonNode> stageNodes = Fields.array(s, "models", at + ".models", true);
      placements += stageNodes.size();
      if (placements > MAX_PLACEMENTS) {
        throw new ProblemException(at + ".models", "the services place more than " + MAX_PLACEMENTS
            + " (service, model) pairs, the most the mapping plans in seconds");
      }
      List<ServiceStage> stages = new ArrayList<>();
      Set<String> models = new HashSet<>();
      for (int j = 0; j < stageNodes.size(); j++) {
        String sat = at + ".models[" + j + "]";
        JsonNode st = stageNodes.get(j);
        if (!st.isObject()) {
          throw new ProblemException(sat, "must be an object");
        }
        Fields.onlyKnown(st, sat, "model", "requestsPerSecond");
        String model = Fields.text(st, "model", sat + ".model");
        if (!models.add(model)) {
          throw new ProblemException(sat + ".model", "'" + model + "' is given twice in this service");
        }
        double rate = Fields.number(st.get("requestsPerSecond"), sat + ".requestsPerSecond", false, Fields.MAX_RATE);
        stages.add(new ServiceStage(model, rate));
      }
      services.add(new ServiceSpec(id, stages));
    }
    int maxPlacements = MappingProblem.DEFAULT_EXACT_MAX_PLACEMENTS;
    int maxResources = MappingProblem.DEFAULT_EXACT_MAX_RESOURCES;
    JsonNode exact = root.get("exact");
    if (exact != null && !exact.isNull()) {
      if (!exact.isObject()) {
        throw new ProblemException("exact", "must be an object");
      }
      Fields.onlyKnown(exact, "exact", "maxPlacements", "maxResources");
      // The exact search is exponential in the placements.
      maxPlacements = (int) Fields.optionalInteger(exact, "maxPlacements", "exact.maxPlacements", 0,
          MAX_EXACT_PLACEMENTS, maxPlacements);
      maxResources = (int) Fields.optionalInteger(exact, "maxResources", "exact.maxResources", 0,
          MAX_RESOURCES, maxResources);
    }
    return new MappingProblem(resources, matrix, services, maxPlacements, maxResources);
  }
}

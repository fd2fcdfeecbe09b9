package io.partita.planning.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.planning.GroupingObjective;
import io.partita.planning.MappingPlan;
import io.partita.planning.MappingPlanner;
import io.partita.planning.MappingProblem;
import io.partita.planning.ModelDemand;
import io.partita.planning.PoolSplitPlan;
import io.partita.planning.PoolSplitProblem;
import io.partita.planning.PoolSplitter;
import io.partita.planning.ProfilePoint;
import io.partita.planning.ResourceSpec;
import io.partita.planning.ServiceSpec;
import io.partita.planning.ServiceStage;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
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
 * the plan as JSON on {@code out}.
 *
 * <p>Exit codes: 0 planned; 1 the problem is valid but has no plan (a model can run nowhere, or no
 * model's share has an eligible grouping); 2 usage error, unreadable file or invalid problem, with a
 * message on {@code err} that names the field ({@code pool.size: must be > 0}).
 */
public final class PlanCli {

  static final int OK = 0;
  static final int NO_PLAN = 1;
  static final int INVALID = 2;

  /** The largest exact bound a problem file may ask for. */
  static final int MAX_EXACT_PLACEMENTS = 14;

  private static final String USAGE = "usage: plan grouping --input FILE | plan mapping --input FILE";

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private PlanCli() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs one command; {@code args} start after the word {@code plan}. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length != 3 || !"--input".equals(args[1])) {
      err.println(USAGE);
      return INVALID;
    }
    String command = args[0];
    if (!command.equals("grouping") && !command.equals("mapping")) {
      err.println("unknown plan command '" + command + "'; " + USAGE);
      return INVALID;
    }
    Path file = Path.of(args[2]);
    JsonNode root;
    try {
      root = JSON.readTree(Files.readString(file));
    } catch (JsonProcessingException e) {
      err.println("invalid problem " + file + ": not valid JSON: " + e.getOriginalMessage());
      return INVALID;
    } catch (IOException e) {
      err.println("cannot read " + file + ": " + e);
      return INVALID;
    }
    if (root == null || !root.isObject()) {
      err.println("invalid problem " + file + ": (root): must be a JSON object");
      return INVALID;
    }
    try {
      ObjectNode result = JSON.createObjectNode();
      result.put("command", command);
      int code;
      if (command.equals("grouping")) {
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
    } catch (ProblemException e) {
      err.println("invalid problem " + file + ": " + e.getMessage());
      return INVALID;
    } catch (IllegalArgumentException e) {
      err.println("invalid problem " + file + ": " + e.getMessage());
      return INVALID;
    } catch (JsonProcessingException e) {
      err.println("cannot write the plan: " + e.getOriginalMessage());
      return INVALID;
    }
  }

  static PoolSplitProblem readGrouping(JsonNode root) throws ProblemException {
    JsonNode pool = Fields.object(root, "pool", "pool");
    int size = Fields.smallInteger(pool, "size", "pool.size", 1);
    long memory = Fields.optionalInteger(pool, "memoryBytes", "pool.memoryBytes", 0, Long.MAX_VALUE);
    long buffer = Fields.optionalInteger(pool, "bufferBytesPerPartition", "pool.bufferBytesPerPartition", 0, 0);
    long threshold = Fields.optionalInteger(pool, "bufferThresholdBytes", "pool.bufferThresholdBytes", 0,
        Long.MAX_VALUE);
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
      String id = Fields.text(m, "id", at + ".id");
      if (!ids.add(id)) {
        throw new ProblemException(at + ".id", "'" + id + "' is given twice");
      }
      Double rate = Fields.optionalNumber(m, "requestsPerSecond", at + ".requestsPerSecond", false);
      if (rate == null && models.size() > 1) {
        throw new ProblemException(at + ".requestsPerSecond", "is required when several models share the pool");
      }
      int batch = (int) Fields.optionalInteger(m, "batchSize", at + ".batchSize", 1, 1);
      Double slo = Fields.optionalNumber(m, "sloMs", at + ".sloMs", true);
      List<JsonNode> points = Fields.array(m, "profile", at + ".profile", true);
      List<ProfilePoint> profile = new ArrayList<>();
      Set<Integer> sizes = new HashSet<>();
      for (int j = 0; j < points.size(); j++) {
        String pat = at + ".profile[" + j + "]";
        JsonNode p = points.get(j);
        if (!p.isObject()) {
          throw new ProblemException(pat, "must be an object");
        }
        int k = Fields.smallInteger(p, "size", pat + ".size", 1);
        if (!sizes.add(k)) {
          throw new ProblemException(pat + ".size", "size " + k + " is given twice");
        }
        double latency = Fields.number(p.get("latencyMs"), pat + ".latencyMs", true);
        long mem = Fields.optionalInteger(p, "memoryBytes", pat + ".memoryBytes", 0, 0);
        profile.add(new ProfilePoint(k, latency, mem));
      }
      demands.add(new ModelDemand(id, rate == null ? 0 : rate, batch, profile, slo));
    }
    return new PoolSplitProblem(size, memory, buffer, threshold, objective, demands);
  }

  static MappingProblem readMapping(JsonNode root) throws ProblemException {
    List<JsonNode> resourceNodes = Fields.array(root, "resources", "resources", true);
    List<ResourceSpec> resources = new ArrayList<>();
    Set<String> resourceIds = new HashSet<>();
    Set<String> kinds = new HashSet<>();
    for (int i = 0; i < resourceNodes.size(); i++) {
      String at = "resources[" + i + "]";
      JsonNode r = resourceNodes.get(i);
      if (!r.isObject()) {
        throw new ProblemException(at, "must be an object");
      }
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
        cells.put(cell.getKey(), Fields.number(cell.getValue(), cat, true));
      }
      matrix.put(row.getKey(), cells);
    }
    List<JsonNode> serviceNodes = Fields.array(root, "services", "services", true);
    List<ServiceSpec> services = new ArrayList<>();
    Set<String> serviceIds = new HashSet<>();
    for (int i = 0; i < serviceNodes.size(); i++) {
      String at = "services[" + i + "]";
      JsonNode s = serviceNodes.get(i);
      if (!s.isObject()) {
        throw new ProblemException(at, "must be an object");
      }
      String id = Fields.text(s, "id", at + ".id");
      if (!serviceIds.add(id)) {
        throw new ProblemException(at + ".id", "'" + id + "' is given twice");
      }
      List<JsonNode> stageNodes = Fields.array(s, "models", at + ".models", true);
      List<ServiceStage> stages = new ArrayList<>();
      Set<String> models = new HashSet<>();
      for (int j = 0; j < stageNodes.size(); j++) {
        String sat = at + ".models[" + j + "]";
        JsonNode st = stageNodes.get(j);
        if (!st.isObject()) {
          throw new ProblemException(sat, "must be an object");
        }
        String model = Fields.text(st, "model", sat + ".model");
        if (!models.add(model)) {
          throw new ProblemException(sat + ".model", "'" + model + "' is given twice in this service");
        }
        double rate = Fields.number(st.get("requestsPerSecond"), sat + ".requestsPerSecond", false);
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
      maxPlacements = (int) Math.min(Integer.MAX_VALUE,
          Fields.optionalInteger(exact, "maxPlacements", "exact.maxPlacements", 0, maxPlacements));
      maxResources = (int) Math.min(Integer.MAX_VALUE,
          Fields.optionalInteger(exact, "maxResources", "exact.maxResources", 0, maxResources));
      if (maxPlacements > MAX_EXACT_PLACEMENTS) {
        throw new ProblemException("exact.maxPlacements", "must be at most " + MAX_EXACT_PLACEMENTS
            + " (the exact search is exponential in it)");
      }
    }
    return new MappingProblem(resources, matrix, services, maxPlacements, maxResources);
  }
}

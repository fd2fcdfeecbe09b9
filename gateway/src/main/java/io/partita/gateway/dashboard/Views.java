package io.partita.gateway.dashboard;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.avro.AssignedServiceModel;
import io.partita.avro.DeadLetter;
import io.partita.avro.Demand;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.JobStatus;
import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.SlotAssignment;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.gateway.jobs.JobStates;
import io.partita.gateway.jobs.RateWindow;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * Builds the JSON of each dashboard view from what {@link DashboardState} and {@link Traffic} hold,
 * for one viewer: {@code mayUse} says which service models the viewer's API key may use (routes,
 * traffic and jobs of other models are left out) and {@code seesDeadLetters} whether it may see
 * dead letters (they can carry any model's data). The view names are the paths of the data
 * endpoints ({@code /dashboard/api/<view>.json}) and the event names of the live stream.
 */
final class Views {
  static final List<String> NAMES = List.of("overview", "hosts", "timings", "plan", "traffic", "jobs", "deadletters");
  static final ObjectMapper JSON = new ObjectMapper();

  /** Who is looking. */
  record Viewer(Predicate<String> mayUse, boolean seesDeadLetters) {}

  private final DashboardState state;
  private final Traffic traffic;
  private final Set<String> serviceModels;
  private final int windowSeconds;
  private final Overview overview;
  private final LongSupplier clock;

  /**
   * @param serviceModels the service models this gateway offers (from its model repository)
   * @param clock epoch ms, for what the overview counts over recent time
   */
  Views(DashboardState state, Traffic traffic, Set<String> serviceModels, DashboardConfig settings, LongSupplier clock) {
    this.state = state;
    this.traffic = traffic;
    this.serviceModels = Set.copyOf(serviceModels);
    this.windowSeconds = settings.windowSeconds();
    this.overview = new Overview(state, traffic, serviceModels, settings.windowSeconds(), settings.historySeconds());
    this.clock = clock;
  }

  ObjectNode view(String name, Viewer viewer) {
    return switch (name) {
      case "overview" -> overview.build(viewer, clock.getAsLong());
      case "hosts" -> hosts();
      case "timings" -> timings();
      case "plan" -> plan();
      case "traffic" -> traffic(viewer);
      case "jobs" -> jobs(viewer);
      case "deadletters" -> deadLetters(viewer);
      default -> throw new IllegalArgumentException("no view " + name);
    };
  }

  ObjectNode hosts() {
    ObjectNode out = JSON.createObjectNode();
    ArrayNode hosts = out.putArray("hosts");
    for (HostEnvironment h : state.hosts.values()) {
      ObjectNode n = hosts.addObject();
      n.put("host", h.getHostId());
      n.put("cpuModel", h.getCpuModel());
      n.put("logicalCores", h.getLogicalCores());
      n.put("physicalCores", h.getPhysicalCores());
      n.put("usableCores", h.getUsableCores());
      n.put("cpuQuotaCores", h.getCpuQuotaCores());
      n.put("memoryBytes", h.getMemoryBytes());
      n.put("memoryLimitBytes", h.getMemoryLimitBytes());
      ArrayNode gpus = n.putArray("gpus");
      for (Gpu g : h.getGpus()) {
        gpus.addObject().put("index", g.getIndex()).put("name", g.getName()).put("memoryBytes", g.getMemoryBytes())
            .put("computeCapability", g.getComputeCapability());
      }
      ArrayNode providers = n.putArray("providers");
      h.getExecutionProviders().forEach(providers::add);
      n.put("onnxRuntime", h.getOnnxRuntimeVersion());
      n.put("os", h.getOsName() + " " + h.getOsVersion() + " (" + h.getOsArch() + ")");
      n.put("java", h.getJavaVersion());
      if (h.getBaseline() == null) {
        n.putNull("baseline");
      } else {
        n.putObject("baseline").put("throughput", h.getBaseline().getThroughput()).put("threads", h.getBaseline().getThreads())
            .put("batch", h.getBaseline().getBatch()).put("referenceModel", h.getBaseline().getReferenceModel())
            .put("pointsMeasured", h.getBaseline().getPointsMeasured()).put("gridSize", h.getBaseline().getGridSize());
      }
      n.put("updated", Instant.ofEpochMilli(h.getTimestamp()).toString());
    }
    return out;
  }

  /** Per model version, one series per host, pool, partition size and provider; points by batch size. */
  ObjectNode timings() {
    Map<String, Map<String, List<TimingEvent>>> byVersion = new TreeMap<>();
    for (TimingEvent e : state.timings.values()) {
      if (!e.getOk()) {
        continue;
      }
      String series = e.getHost() + "/" + e.getPool() + "|" + String.format("%05d", e.getSize()) + "|" + e.getProvider();
      byVersion.computeIfAbsent(e.getModel() + "\u0000" + e.getVersion(), k -> new TreeMap<>())
          .computeIfAbsent(series, k -> new ArrayList<>()).add(e);
    }
    ObjectNode out = JSON.createObjectNode();
    ArrayNode models = out.putArray("models");
    byVersion.forEach((mv, series) -> {
      String[] parts = mv.split("\u0000");
      ObjectNode m = models.addObject().put("model", parts[0]).put("version", parts[1]);
      ArrayNode lines = m.putArray("series");
      series.values().forEach(points -> {
        TimingEvent first = points.get(0);
        ObjectNode line = lines.addObject().put("host", first.getHost()).put("pool", first.getPool())
            .put("size", first.getSize()).put("provider", first.getProvider())
            .put("label", "size " + first.getSize() + " " + first.getProvider() + " (" + first.getHost() + "/" + first.getPool() + ")");
        ArrayNode pts = line.putArray("points");
        points.stream().sorted(Comparator.comparingInt(TimingEvent::getBatch)).forEach(p -> pts.addObject()
            .put("batch", p.getBatch()).put("p50Ms", p.getP50Ms()).put("p99Ms", p.getP99Ms())
            .put("throughput", p.getThroughput()).put("samples", p.getSamples()).put("stable", p.getStable()));
      });
    });
    return out;
  }

  ObjectNode plan() {
    return plan(state);
  }

  /** Per host: the pools cut into slots, the partition plans and the version choices, of any state (a what-if's too). */
  static ObjectNode plan(DashboardState state) {
    Set<String> hosts = new TreeSet<>();
    state.assignments.values().forEach(a -> hosts.add(a.getHost()));
    state.partitions.values().forEach(p -> hosts.add(p.getHost()));
    state.versions.values().forEach(v -> hosts.add(v.getHost()));
    ObjectNode out = JSON.createObjectNode();
    ArrayNode array = out.putArray("hosts");
    for (String host : hosts) {
      ObjectNode h = array.addObject().put("host", host);
      Map<String, List<SlotAssignment>> pools = new TreeMap<>();
      state.assignments.values().stream().filter(a -> a.getHost().equals(host))
          .forEach(a -> pools.computeIfAbsent(a.getPool(), k -> new ArrayList<>()).add(a));
      ArrayNode poolArray = h.putArray("pools");
      pools.forEach((pool, slots) -> {
        int size = state.partitions.values().stream().filter(p -> p.getHost().equals(host) && p.getPool().equals(pool))
            .mapToInt(PartitionPlan::getPoolSize).max().orElse(slots.stream().mapToInt(Views::width).sum());
        ObjectNode p = poolArray.addObject().put("pool", pool).put("size", size);
        ArrayNode slotArray = p.putArray("slots");
        slots.stream().sorted(Comparator.comparingInt(Views::firstResource)).forEach(s -> {
          ObjectNode n = slotArray.addObject().put("slot", s.getSlot()).put("model", s.getModel()).put("version", s.getVersion())
              .put("provider", s.getProvider()).put("threads", s.getThreads()).put("maxBatch", s.getMaxBatch())
              .put("memoryBudgetBytes", s.getMemoryBudgetBytes()).put("width", width(s)).put("gpu", s.getGpu())
              .put("planId", s.getPlanId());
          ArrayNode cpus = n.putArray("cpus");
          s.getCpus().forEach(cpus::add);
          ArrayNode instances = n.putArray("instances");
          for (AssignedServiceModel a : s.getServiceModels()) {
            instances.addObject().put("serviceModel", a.getServiceModel()).put("instanceId", a.getInstanceId())
                .put("weightFile", a.getWeightFile() == null ? null : a.getWeightFile().getPath());
          }
        });
      });
      ArrayNode partitions = h.putArray("partitions");
      state.partitions.values().stream().filter(p -> p.getHost().equals(host)).forEach(p -> {
        ObjectNode n = partitions.addObject().put("model", p.getModel()).put("version", p.getVersion()).put("pool", p.getPool())
            .put("provider", p.getProvider()).put("batch", p.getBatch()).put("planned", p.getPlanned())
            .put("shareResources", p.getShareResources()).put("requestsPerSecond", p.getRequestsPerSecond())
            .put("predictedThroughput", p.getPredictedThroughput()).put("measuredThroughput", p.getMeasuredThroughput())
            .put("maxLatencyMs", p.getMaxLatencyMs()).put("unmetRequestsPerSecond", p.getUnmetRequestsPerSecond())
            .put("method", p.getMethod()).put("noEligibleReason", p.getNoEligibleReason())
            .put("basis", p.getBasis()).put("why", p.getWhy());
        ArrayNode sizes = n.putArray("sizes");
        p.getSizes().forEach(sizes::add);
      });
      ArrayNode versions = h.putArray("versions");
      state.versions.values().stream().filter(v -> v.getHost().equals(host)).forEach(v -> versions.add(version(v)));
    }
    return out;
  }

  private static ObjectNode version(VersionChoice v) {
    ObjectNode n = JSON.createObjectNode().put("model", v.getModel()).put("chosenVersion", v.getChosenVersion())
        .put("noChoiceReason", v.getNoChoiceReason());
    ArrayNode candidates = n.putArray("candidates");
    String why = null;
    for (VersionCandidate c : v.getCandidates()) {
      candidates.addObject().put("version", c.getVersion()).put("status", c.getStatus()).put("latencyMs", c.getLatencyMs())
          .put("predicted", c.getPredicted()).put("sourceHost", c.getSourceHost()).put("accuracy", c.getAccuracy())
          .put("reason", c.getReason());
      if ("CHOSEN".equals(c.getStatus())) {
        // The planner's reason says what the choice optimised, where its latency comes from and how
        // it meets the objective; records without one get the figures alone.
        String from = c.getPredicted() ? "predicted from host " + c.getSourceHost() : "measured on this host";
        why = c.getReason() != null ? c.getReason()
            : from + (c.getLatencyMs() == null ? "" : String.format(", %.3f ms", c.getLatencyMs()));
      }
    }
    n.put("why", why != null ? why : v.getNoChoiceReason());
    n.put("objective", v.getObjective()).put("latencyObjectiveMs", v.getLatencyObjectiveMs());
    return n;
  }

  private static int width(SlotAssignment s) {
    return s.getCpus().isEmpty() ? 1 : s.getCpus().size();
  }

  private static int firstResource(SlotAssignment s) {
    return s.getCpus().isEmpty() ? s.getGpu() : s.getCpus().get(0);
  }

  /** Per visible service model: route, demand, and the gateway's own request figures. */
  ObjectNode traffic(Viewer viewer) {
    Set<String> models = new TreeSet<>(serviceModels);
    models.addAll(state.routes.rows.keySet());
    ObjectNode out = JSON.createObjectNode().put("windowSeconds", windowSeconds);
    ArrayNode array = out.putArray("models");
    for (String model : models) {
      if (!viewer.mayUse().test(model)) {
        continue;
      }
      ObjectNode n = array.addObject().put("model", model);
      Route route = state.routes.rows.get(model);
      n.put("routed", route != null);
      n.put("readyInstances", route == null ? 0 : route.getReadyInstances());
      int inFlight = 0;
      int queued = 0;
      ArrayNode instances = n.putArray("instances");
      if (route != null) {
        for (RouteInstance i : route.getInstances()) {
          inFlight += i.getInFlight();
          queued += i.getQueueDepth();
          instances.addObject().put("instanceId", i.getInstanceId()).put("host", i.getHost()).put("slot", i.getSlot())
              .put("ready", i.getReady()).put("reason", i.getReason()).put("inFlight", i.getInFlight())
              .put("queueDepth", i.getQueueDepth());
        }
      }
      n.put("inFlight", inFlight);
      n.put("queueDepth", queued);
      Demand d = state.demand.rows.get(model);
      n.put("lag", d == null ? null : d.getLag());
      n.put("demandRate", d == null ? null : d.getRequestsPerSecond());
      Traffic.Figures f = traffic.figures(model);
      n.put("requests", f == null ? 0 : f.requests());
      n.put("errors", f == null ? 0 : f.errors());
      n.put("rate", f == null ? 0 : round(f.rate()));
      n.put("errorRate", f == null ? 0 : round(f.errorRate()));
      n.put("p50Ms", f == null ? null : f.p50Ms());
      n.put("p99Ms", f == null ? null : f.p99Ms());
      ArrayNode history = n.putArray("history");
      if (f != null) {
        f.history().forEach(h -> history.addArray().add(h[0]).add(round(h[1])).add(round(h[2])));
      }
    }
    return out;
  }

  ObjectNode jobs(Viewer viewer) {
    ObjectNode out = JSON.createObjectNode();
    ArrayNode array = out.putArray("jobs");
    state.jobs.values().stream().filter(s -> viewer.mayUse().test(s.getServiceModel()))
        .sorted(Comparator.comparingLong(JobStatus::getCreatedAt).reversed()).limit(200).forEach(s -> {
          boolean done = JobStates.isFinal(s.getState());
          boolean running = !done && s.getStartedAt() > 0;
          long eta = RateWindow.etaSeconds(s.getTotal() - s.getDone(), s.getRatePerSecond());
          array.addObject().put("id", s.getJobId()).put("model", s.getServiceModel()).put("version", s.getVersion())
              .put("state", s.getState()).put("final", done).put("total", s.getTotal()).put("done", s.getDone())
              .put("failed", s.getFailed())
              .put("percent", s.getTotal() == 0 ? (done ? 100 : 0) : Math.floor(1000.0 * s.getDone() / s.getTotal()) / 10)
              .put("rate", running ? round(s.getRatePerSecond()) : 0.0)
              .put("etaSeconds", done ? Long.valueOf(0) : running && eta >= 0 ? Long.valueOf(eta) : null)
              .put("created", Instant.ofEpochMilli(s.getCreatedAt()).toString()).put("message", s.getMessage());
        });
    return out;
  }

  ObjectNode deadLetters(Viewer viewer) {
    ObjectNode out = JSON.createObjectNode();
    out.put("visible", viewer.seesDeadLetters());
    ArrayNode array = out.putArray("deadLetters");
    if (!viewer.seesDeadLetters()) {
      return out;
    }
    List<DashboardState.Letter> letters = new ArrayList<>(state.letters());
    for (int i = letters.size() - 1; i >= 0; i--) { // newest first
      DashboardState.Letter l = letters.get(i);
      DeadLetter d = l.letter();
      array.addObject().put("at", Instant.ofEpochMilli(l.timestamp()).toString()).put("deadLetterOffset", l.offset())
          .put("topic", d.getTopic()).put("partition", d.getPartition()).put("offset", d.getOffset())
          .put("reason", d.getError()).put("errorClass", d.getErrorClass()).put("component", d.getComponent());
    }
    return out;
  }

  static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }
}

package io.partita.planner.plan;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.AssignedWeightFile;
import io.partita.avro.Demand;
import io.partita.avro.ExcludedSize;
import io.partita.avro.GroupingOption;
import io.partita.avro.HostEnvironment;
import io.partita.avro.MappedModel;
import io.partita.avro.ModelVersion;
import io.partita.avro.MountStatus;
import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceMapping;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.avro.TopicPartitions;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.planning.AllocationPlan;
import io.partita.planning.Assignment;
import io.partita.planning.GroupingPlan;
import io.partita.planning.InstancePlacement;
import io.partita.planning.MappingPlan;
import io.partita.planning.MappingPlanner;
import io.partita.planning.MappingProblem;
import io.partita.planning.ModelDemand;
import io.partita.planning.ModelShare;
import io.partita.planning.PoolSplitPlan;
import io.partita.planning.PoolSplitProblem;
import io.partita.planning.PoolSplitter;
import io.partita.planning.ProfilePoint;
import io.partita.planning.ResourceSpec;
import io.partita.planning.ServiceModelSpec;
import io.partita.planning.ServiceSpec;
import io.partita.planning.ServiceStage;
import io.partita.planning.SlotState;
import io.partita.planning.TimingObservation;
import io.partita.planning.VersionOutcome;
import io.partita.planning.VersionPlan;
import io.partita.planning.VersionProblem;
import io.partita.planning.VersionRequirements;
import io.partita.planning.VersionSelector;
import io.partita.planning.WeightFile;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Turns the input tables into plan-table records by calling the four pure planning methods of
 * {@code planner-core}. Pure: no Kafka, no clock; the same {@link PlanInputs} give the same records,
 * byte for byte, which is what makes a replay equal to the live plan.
 *
 * <p>Each method plans one kind of key (a model on a host, a host's pools, all services, all
 * slots, all routes) so that the stream processor can re-plan only what a change affects.
 */
public final class Plans {
  public static final String CPU = "cpu";
  public static final String GPU = "gpu";
  public static final List<String> POOLS = List.of(CPU, GPU);
  /** Baseline score of a host that published none, so that predictions still have a ratio. */
  public static final double NO_BASELINE_SCORE = 1.0;

  private Plans() {}

  // ---------------------------------------------------------------- inputs

  /** The models that have at least one version in the catalog, sorted. */
  public static SortedMap<String, List<ModelVersion>> catalogModels(PlanInputs in) {
    SortedMap<String, List<ModelVersion>> out = new TreeMap<>();
    in.versions().values().forEach(v -> out.computeIfAbsent(v.getModel(), m -> new ArrayList<>()).add(v));
    return out;
  }

  /** The single-partition measurements of one model version on one pool of one host. */
  public static List<TimingEvent> timingsOf(PlanInputs in, String model, String version, String host, String pool) {
    String prefix = Keys.partition(model, version, host, pool) + Keys.SEP;
    return new ArrayList<>(in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values());
  }

  /** The resources of one pool of a host: CPU ids or GPU indices, ascending. */
  public static List<Integer> poolIds(HostEnvironment env, String pool) {
    List<Integer> ids = new ArrayList<>();
    if (pool.equals(CPU)) {
      int cores = env.getUsableCores() > 0 ? env.getUsableCores() : env.getLogicalCores();
      if (env.getUsableCpuIds().size() == cores) {
        ids.addAll(env.getUsableCpuIds());
        ids.sort(Comparator.naturalOrder());
      } else {
        for (int i = 0; i < cores; i++) {
          ids.add(i);
        }
      }
    } else {
      env.getGpus().forEach(g -> ids.add(g.getIndex()));
      ids.sort(Comparator.naturalOrder());
    }
    return ids;
  }

  /** Memory all instances on the pool share: the host's (limit) for CPUs, the GPUs' summed memory. */
  public static long poolMemory(HostEnvironment env, String pool) {
    if (pool.equals(CPU)) {
      return env.getMemoryLimitBytes() != null ? env.getMemoryLimitBytes() : env.getMemoryBytes();
    }
    return env.getGpus().stream().mapToLong(g -> g.getMemoryBytes()).sum();
  }

  /** The profile a grouping uses: one provider and batch size, its measured sizes. */
  public record Profile(String provider, int batch, List<ProfilePoint> points) {}

  /**
   * The profile of one model version on one pool of one host: among its (provider, batch) pairs,
   * the one with the most measured sizes, ties to the larger batch, then the provider name. Null
   * when nothing was measured there.
   */
  public static Profile profile(PlanInputs in, String model, String version, String host, String pool) {
    Map<String, List<TimingEvent>> byConfig = new TreeMap<>();
    for (TimingEvent e : timingsOf(in, model, version, host, pool)) {
      byConfig.computeIfAbsent(e.getProvider() + "\u0000" + e.getBatch(), k -> new ArrayList<>()).add(e);
    }
    List<TimingEvent> best = null;
    for (List<TimingEvent> events : byConfig.values()) {
      if (best == null || compareConfig(events, best) > 0) {
        best = events;
      }
    }
    if (best == null) {
      return null;
    }
    List<ProfilePoint> points = new ArrayList<>();
    best.stream().sorted(Comparator.comparingInt(TimingEvent::getSize))
        .forEach(e -> points.add(new ProfilePoint(e.getSize(), e.getP50Ms(), e.getMemoryBytes())));
    return new Profile(best.get(0).getProvider(), best.get(0).getBatch(), points);
  }

  private static int compareConfig(List<TimingEvent> a, List<TimingEvent> b) {
    int c = Integer.compare(a.size(), b.size());
    if (c != 0) {
      return c;
    }
    c = Integer.compare(a.get(0).getBatch(), b.get(0).getBatch());
    if (c != 0) {
      return c;
    }
    return b.get(0).getProvider().compareTo(a.get(0).getProvider());
  }

  /** Requests per second for a base model: the sum of its service models' Demand (0 when none). */
  public static double demandOf(PlanInputs in, String model) {
    double sum = 0;
    for (ServiceModel sm : in.serviceModels().values()) {
      Demand d = in.demand().get(sm.getName());
      if (sm.getBaseModel().equals(model) && d != null) {
        sum += d.getRequestsPerSecond();
      }
    }
    return sum;
  }

  /** The tightest requirements the service models of a base model place on it. */
  public static VersionRequirements requirementsOf(PlanInputs in, String model) {
    Double latency = null;
    Double accuracy = null;
    Long memory = null;
    for (ServiceModel sm : in.serviceModels().values()) {
      if (!sm.getBaseModel().equals(model)) {
        continue;
      }
      if (sm.getLatencyObjectiveMs() != null) {
        latency = latency == null ? sm.getLatencyObjectiveMs() : Math.min(latency, sm.getLatencyObjectiveMs());
      }
      if (sm.getMinAccuracy() != null) {
        accuracy = accuracy == null ? sm.getMinAccuracy() : Math.max(accuracy, sm.getMinAccuracy());
      }
      if (sm.getMemoryCapBytes() != null) {
        memory = memory == null ? sm.getMemoryCapBytes() : Math.min(memory, sm.getMemoryCapBytes());
      }
    }
    return new VersionRequirements(latency, accuracy, memory);
  }

  public static io.partita.planning.HostEnvironment hostOf(HostEnvironment env) {
    double score = env.getBaseline() != null && env.getBaseline().getThroughput() > 0
        && !Double.isInfinite(env.getBaseline().getThroughput())
        ? env.getBaseline().getThroughput() : NO_BASELINE_SCORE;
    long memory = env.getMemoryLimitBytes() != null ? env.getMemoryLimitBytes() : env.getMemoryBytes();
    return new io.partita.planning.HostEnvironment(env.getHostId(), Set.copyOf(env.getExecutionProviders()),
        Set.copyOf(env.getCpuFlags()), memory, score);
  }

  // ---------------------------------------------------------------- 4. versions

  /**
   * The input of version choice for one model on one host. Observations: every stable
   * single-partition measurement of the model's versions at the smallest batch size measured for
   * that version on that host, its p50 latency (so a latency objective compares with the latency
   * of one small request).
   */
  public static VersionProblem versionProblem(PlanInputs in, String model, String host) {
    List<ModelVersion> versions = catalogModels(in).get(model);
    HostEnvironment env = in.hosts().get(host);
    if (versions == null || env == null) {
      return null;
    }
    List<io.partita.planning.ModelVersion> candidates = new ArrayList<>();
    for (ModelVersion v : versions) {
      candidates.add(new io.partita.planning.ModelVersion(v.getVersion(), Set.copyOf(v.getProviders()),
          v.getPrecision(), v.getMemoryBytes() == null ? 0 : v.getMemoryBytes(), v.getAccuracy()));
    }
    List<io.partita.planning.HostEnvironment> others = new ArrayList<>();
    in.hosts().values().stream().filter(h -> !h.getHostId().equals(host)).forEach(h -> others.add(hostOf(h)));
    return new VersionProblem(hostOf(env), others, candidates, observations(in, model),
        requirementsOf(in, model));
  }

  private static List<TimingObservation> observations(PlanInputs in, String model) {
    Map<String, Integer> smallestBatch = new TreeMap<>();
    List<TimingEvent> events = new ArrayList<>();
    String prefix = model + Keys.SEP;
    for (TimingEvent e : in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      events.add(e);
      smallestBatch.merge(e.getVersion() + Keys.SEP + e.getHost(), e.getBatch(), Math::min);
    }
    List<TimingObservation> out = new ArrayList<>();
    for (TimingEvent e : events) {
      if (e.getBatch() == smallestBatch.get(e.getVersion() + Keys.SEP + e.getHost())) {
        out.add(new TimingObservation(e.getVersion(), e.getHost(), e.getP50Ms()));
      }
    }
    return out;
  }

  /** The version choice for one model on one host; null when the model or the host is unknown. */
  public static VersionChoice versionChoice(PlanInputs in, String model, String host) {
    VersionProblem problem = versionProblem(in, model, host);
    if (problem == null) {
      return null;
    }
    VersionPlan plan = VersionSelector.choose(problem);
    List<VersionCandidate> candidates = new ArrayList<>();
    for (VersionOutcome o : plan.outcomes()) {
      candidates.add(VersionCandidate.newBuilder().setVersion(o.versionId()).setStatus(o.status().name())
          .setLatencyMs(o.latencyMs()).setPredicted(o.predicted()).setSourceHost(o.sourceHost())
          .setAccuracy(o.accuracy()).setReason(o.reason()).build());
    }
    return VersionChoice.newBuilder().setModel(model).setHost(host).setChosenVersion(plan.chosenVersionId())
        .setNoChoiceReason(plan.noChoiceReason()).setCandidates(candidates).build();
  }

  // ---------------------------------------------------------------- 2. mapping

  /**
   * The mapping problem over every pool of every host (resource {@code host/pool}, kind the pool),
   * with {@code T[m][host/pool]} = the fastest per-item time ({@code p50 / batch}) of the model's
   * version chosen for that host, measured on that pool. Services: the catalog's service models
   * grouped by their {@code service} (or their base model), one stage per base model with the
   * summed Demand of its service models, or the default rate while none is known. Null when there
   * is no service or no resource.
   *
   * @param chosen model/host -> chosen version id
   */
  public static MappingProblem mappingProblem(PlanInputs in, PlanSettings settings, Map<String, String> chosen) {
    List<ResourceSpec> resources = new ArrayList<>();
    for (HostEnvironment env : in.hosts().values()) {
      for (String pool : POOLS) {
        if (!poolIds(env, pool).isEmpty()) {
          resources.add(new ResourceSpec(env.getHostId() + Keys.SEP + pool, pool));
        }
      }
    }
    Set<String> models = catalogModels(in).keySet();
    Map<String, Map<String, Double>> latency = new TreeMap<>();
    for (String model : models) {
      Map<String, Double> row = new TreeMap<>();
      for (ResourceSpec r : resources) {
        String host = r.id().substring(0, r.id().lastIndexOf(Keys.SEP));
        String version = chosen.get(Keys.modelHost(model, host));
        if (version == null) {
          continue;
        }
        double best = Double.POSITIVE_INFINITY;
        for (TimingEvent e : timingsOf(in, model, version, host, r.kind())) {
          best = Math.min(best, e.getP50Ms() / e.getBatch());
        }
        if (best < Double.POSITIVE_INFINITY) {
          row.put(r.id(), best);
        }
      }
      latency.put(model, row);
    }
    List<ServiceSpec> services = new ArrayList<>();
    for (Map.Entry<String, List<ServiceModel>> service : servicesOf(in).entrySet()) {
      Map<String, double[]> rates = new TreeMap<>();
      Map<String, Boolean> known = new TreeMap<>();
      for (ServiceModel sm : service.getValue()) {
        if (!models.contains(sm.getBaseModel())) {
          continue;
        }
        Demand d = in.demand().get(sm.getName());
        rates.computeIfAbsent(sm.getBaseModel(), m -> new double[1])[0] += d == null ? 0 : d.getRequestsPerSecond();
        known.merge(sm.getBaseModel(), d != null, Boolean::logicalOr);
      }
      List<ServiceStage> stages = new ArrayList<>();
      rates.forEach((m, r) -> stages.add(new ServiceStage(m, known.get(m) ? r[0] : settings.defaultRequestsPerSecond())));
      if (!stages.isEmpty()) {
        services.add(new ServiceSpec(service.getKey(), stages));
      }
    }
    if (services.isEmpty() || resources.isEmpty()) {
      return null;
    }
    return new MappingProblem(resources, latency, services);
  }

  /** Service models grouped by service id ({@code service}, else the base model), sorted. */
  public static SortedMap<String, List<ServiceModel>> servicesOf(PlanInputs in) {
    SortedMap<String, List<ServiceModel>> out = new TreeMap<>();
    for (ServiceModel sm : in.serviceModels().values()) {
      String id = sm.getService() != null && !sm.getService().isBlank() ? sm.getService() : sm.getBaseModel();
      out.computeIfAbsent(id, k -> new ArrayList<>()).add(sm);
    }
    return out;
  }

  /** One ServiceMapping per service (key service id), or none when there is nothing to map. */
  public static SortedMap<String, ServiceMapping> mappings(PlanInputs in, PlanSettings settings, Map<String, String> chosen) {
    SortedMap<String, ServiceMapping> out = new TreeMap<>();
    MappingProblem problem;
    String invalid = null;
    try {
      problem = mappingProblem(in, settings, chosen);
    } catch (IllegalArgumentException e) {
      problem = null;
      invalid = e.getMessage();
    }
    if (problem == null && invalid == null) {
      return out;
    }
    if (problem == null) {
      for (String service : servicesOf(in).keySet()) {
        out.put(service, unplanned(service, invalid.startsWith("resources: must span at least two kinds")
            ? "only one kind of resource: the mapping method needs at least two, so each model runs on every"
                + " pool where its chosen version was measured (" + invalid + ")"
            : "invalid mapping problem: " + invalid));
      }
      return out;
    }
    MappingPlan plan = MappingPlanner.plan(problem);
    Map<String, String> kindOf = new TreeMap<>();
    problem.resources().forEach(r -> kindOf.put(r.id(), r.kind()));
    for (ServiceSpec service : problem.services()) {
      io.partita.planning.ServiceMapping sm = plan.services().stream()
          .filter(s -> s.serviceId().equals(service.id())).findFirst().orElse(null);
      List<MappedModel> assigned = new ArrayList<>();
      for (Assignment a : plan.assignments()) {
        if (!a.serviceId().equals(service.id())) {
          continue;
        }
        String host = a.resourceId().substring(0, a.resourceId().lastIndexOf(Keys.SEP));
        double rate = service.stages().stream().filter(s -> s.modelId().equals(a.modelId()))
            .mapToDouble(ServiceStage::requestsPerSecond).findFirst().orElse(0);
        assigned.add(MappedModel.newBuilder().setModel(a.modelId())
            .setVersion(chosen.getOrDefault(Keys.modelHost(a.modelId(), host), ""))
            .setResource(a.resourceId()).setKind(kindOf.get(a.resourceId())).setLatencyMs(a.latencyMs())
            .setRequestsPerSecond(rate).setLoadMsPerSecond(a.loadMsPerSecond()).build());
      }
      List<String> errors = plan.errors().stream().filter(e -> e.contains("of service " + service.id() + " ")).toList();
      out.put(service.id(), ServiceMapping.newBuilder().setService(service.id())
          .setPlanned(plan.planned() && errors.isEmpty())
          .setReason(errors.isEmpty() ? null : "a model of the service can run on no resource")
          .setErrors(errors)
          .setChosenScheme(sm == null ? null : sm.chosen().name())
          .setWhy(sm == null ? null : sm.why())
          .setModelFirstCostMsPerSecond(sm == null ? null : sm.modelFirst().costMsPerSecond())
          .setHardwareFirstCostMsPerSecond(sm == null ? null : sm.hardwareFirst().costMsPerSecond())
          .setCostMsPerSecond(plan.costMsPerSecond()).setPipelineLatencyMs(plan.pipelineLatencyMs())
          .setAssignments(assigned)
          .setExactComputed(plan.exact() != null && plan.exact().computed())
          .setExactCostMsPerSecond(plan.exact() != null && plan.exact().computed() ? plan.exact().costMsPerSecond() : null)
          .setGap(plan.exact() == null ? null : plan.exact().gap())
          .setExactReason(plan.exact() == null ? null : plan.exact().reason())
          .build());
    }
    return out;
  }

  private static ServiceMapping unplanned(String service, String reason) {
    return ServiceMapping.newBuilder().setService(service).setPlanned(false).setReason(reason)
        .setErrors(List.of()).setCostMsPerSecond(0).setPipelineLatencyMs(0).setAssignments(List.of())
        .setExactComputed(false).build();
  }

  /** model -> the pool kinds the planned mappings put it on; a model absent here may use any pool. */
  public static SortedMap<String, Set<String>> kinds(Collection<ServiceMapping> mappings) {
    SortedMap<String, Set<String>> out = new TreeMap<>();
    for (ServiceMapping m : mappings) {
      if (!m.getPlanned()) {
        continue;
      }
      for (MappedModel a : m.getAssignments()) {
        out.computeIfAbsent(a.getModel(), k -> new TreeSet<>()).add(a.getKind());
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- 1. partitions

  /**
   * The pool-split problem of one pool of one host: every catalog model whose version chosen for
   * the host was measured on this pool, and which the mapping puts on this kind of pool (or which
   * no planned mapping covers). Null when no model qualifies.
   *
   * @param chosenOnHost model -> version chosen for this host
   * @param kinds model -> pool kinds from the mapping
   */
  public static PoolSplitProblem poolProblem(PlanInputs in, PlanSettings settings, String host, String pool,
      Map<String, String> chosenOnHost, Map<String, Set<String>> kinds) {
    HostEnvironment env = in.hosts().get(host);
    if (env == null || poolIds(env, pool).isEmpty()) {
      return null;
    }
    List<ModelDemand> demands = new ArrayList<>();
    for (String model : catalogModels(in).keySet()) {
      String version = chosenOnHost.get(model);
      Set<String> allowed = kinds.get(model);
      if (version == null || (allowed != null && !allowed.contains(pool))) {
        continue;
      }
      Profile profile = profile(in, model, version, host, pool);
      if (profile == null) {
        continue;
      }
      demands.add(new ModelDemand(model, demandOf(in, model), profile.batch(), profile.points(),
          requirementsOf(in, model).latencyObjectiveMs()));
    }
    if (demands.isEmpty()) {
      return null;
    }
    return new PoolSplitProblem(poolIds(env, pool).size(), poolMemory(env, pool),
        settings.bufferBytesPerPartition(), settings.bufferThresholdBytes(), settings.objective(), demands);
  }

  /** The partition plans of every pool of one host, key model/version/host/pool. */
  public static SortedMap<String, PartitionPlan> partitions(PlanInputs in, PlanSettings settings, String host,
      Map<String, String> chosenOnHost, Map<String, Set<String>> kinds) {
    SortedMap<String, PartitionPlan> out = new TreeMap<>();
    for (String pool : POOLS) {
      PoolSplitProblem problem = poolProblem(in, settings, host, pool, chosenOnHost, kinds);
      if (problem == null) {
        continue;
      }
      PoolSplitPlan split = PoolSplitter.split(problem);
      for (ModelShare share : split.shares()) {
        String model = share.modelId();
        String version = chosenOnHost.get(model);
        Profile profile = profile(in, model, version, host, pool);
        GroupingPlan g = share.plan();
        PartitionPlan.Builder b = PartitionPlan.newBuilder().setModel(model).setVersion(version).setHost(host)
            .setPool(pool).setProvider(profile.provider()).setBatch(profile.batch())
            .setPoolSize(problem.poolSize()).setShareResources(share.resources())
            .setShareMemoryBytes(share.memoryBytes()).setRequestsPerSecond(share.requestsPerSecond())
            .setPlanned(g.planned()).setUnmetRequestsPerSecond(share.unmetRequestsPerSecond())
            .setNoEligibleReason(g.noEligibleReason()).setMethod(g.method() == null ? "none" : g.method());
        List<GroupingOption> runnersUp = new ArrayList<>();
        g.runnersUp().forEach(r -> runnersUp.add(GroupingOption.newBuilder().setSizes(r.sizes())
            .setThroughput(r.throughputPerSecond()).setMaxLatencyMs(r.maxLatencyMs()).build()));
        List<ExcludedSize> excluded = new ArrayList<>();
        g.excludedSizes().forEach(x -> excluded.add(new ExcludedSize(x.size(), x.reason())));
        b.setRunnersUp(runnersUp).setExcludedSizes(excluded);
        if (g.planned()) {
          TimingEvent measured = in.groupings().get(Keys.grouping(model, version, host, pool, profile.batch(),
              profile.provider(), g.choice().sizes()));
          b.setSizes(g.choice().sizes()).setPredictedThroughput(g.choice().throughputPerSecond())
              .setMeasuredThroughput(measured == null ? null : measured.getThroughput())
              .setMaxLatencyMs(g.choice().maxLatencyMs()).setMemoryBytes(g.choice().memoryBytes());
        } else {
          b.setSizes(List.of()).setPredictedThroughput(0).setMaxLatencyMs(0).setMemoryBytes(0);
        }
        out.put(Keys.partition(model, version, host, pool), b.build());
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- 3. assignments and routes

  /**
   * One slot per planned partition, {@code <pool>-<n>} numbered per host and pool in the order of
   * the partition plans' keys and their sizes (descending); CPU partitions take consecutive CPU ids
   * of the pool, GPU partitions consecutive GPU indices (the slot records the first, the
   * assignment record has one GPU field). Instances of the catalog's service models are placed on
   * these slots by {@link io.partita.planning.InstanceAllocator}; key host/slot.
   */
  public static SortedMap<String, SlotAssignment> assignments(PlanInputs in, PlanSettings settings,
      Collection<PartitionPlan> partitions) {
    List<PartitionPlan> ordered = new ArrayList<>(partitions);
    ordered.sort(Comparator.comparing((PartitionPlan p) -> p.getHost()).thenComparing(PartitionPlan::getPool)
        .thenComparing(PartitionPlan::getModel).thenComparing(PartitionPlan::getVersion));
    Map<String, SlotAssignment.Builder> slots = new LinkedHashMap<>();
    Map<String, Integer> nextSlot = new TreeMap<>();
    Map<String, Integer> nextId = new TreeMap<>();
    List<SlotState> states = new ArrayList<>();
    for (PartitionPlan p : ordered) {
      HostEnvironment env = in.hosts().get(p.getHost());
      if (!p.getPlanned() || env == null) {
        continue;
      }
      List<Integer> ids = poolIds(env, p.getPool());
      String poolKey = p.getHost() + Keys.SEP + p.getPool();
      for (int size : p.getSizes()) {
        int n = nextSlot.merge(poolKey, 1, Integer::sum) - 1;
        int first = nextId.getOrDefault(poolKey, 0);
        nextId.put(poolKey, first + size);
        List<Integer> cpus = new ArrayList<>();
        int gpu = -1;
        if (p.getPool().equals(CPU)) {
          for (int i = first; i < first + size && i < ids.size(); i++) {
            cpus.add(ids.get(i));
          }
        } else {
          gpu = first < ids.size() ? ids.get(first) : -1;
        }
        String slot = p.getPool() + "-" + n;
        String key = Keys.hostSlot(p.getHost(), slot);
        slots.put(key, SlotAssignment.newBuilder().setHost(p.getHost()).setSlot(slot).setModel(p.getModel())
            .setVersion(p.getVersion()).setPool(p.getPool()).setCpus(cpus).setGpu(gpu).setProvider(p.getProvider())
            .setThreads(p.getPool().equals(CPU) ? size : 0).setMaxBatch(p.getBatch()).setMemoryBudgetBytes(0)
            .setPlanId(null).setTimestamp(0));
        states.add(new SlotState(key, p.getHost(), p.getModel(), Long.MAX_VALUE / 4, true, 0, List.of()));
      }
    }
    List<ServiceModelSpec> specs = new ArrayList<>();
    for (ServiceModel sm : in.serviceModels().values()) {
      WeightFile file = sm.getWeightFile() == null ? null
          : new WeightFile(sm.getWeightFile().getUri(), sm.getWeightFile().getSha256(),
              sm.getWeightFile().getSizeBytes());
      specs.add(new ServiceModelSpec(sm.getName(), sm.getBaseModel(), file, Math.max(0, sm.getInstances())));
    }
    AllocationPlan allocation = io.partita.planning.InstanceAllocator.allocate(specs, states);
    Map<String, List<AssignedServiceModel>> bySlot = new TreeMap<>();
    for (InstancePlacement placement : allocation.placements()) {
      ServiceModel sm = in.serviceModels().get(placement.serviceModelId());
      AssignedWeightFile file = sm.getWeightFile() == null ? null
          : new AssignedWeightFile(sm.getWeightFile().getUri(), sm.getWeightFile().getSha256());
      bySlot.computeIfAbsent(placement.slotId(), k -> new ArrayList<>()).add(AssignedServiceModel.newBuilder()
          .setServiceModel(sm.getName()).setInstanceId(instanceId(sm.getName(), placement.instance()))
          .setWeightFile(file).build());
    }
    SortedMap<String, SlotAssignment> out = new TreeMap<>();
    slots.forEach((key, b) -> out.put(key, b.setServiceModels(bySlot.getOrDefault(key, List.of())).build()));
    return out;
  }

  public static String instanceId(String serviceModel, int instance) {
    return serviceModel + "#" + instance;
  }

  /**
   * One route per catalog service model: its planned instances, each ready when the worker reports
   * its slot running the assigned model version, healthy, with that instance READY (or EVICTED:
   * mounted again on its next request). Key service model.
   *
   * <p>Make before break: an instance whose assigned slot does not report it ready yet (a re-plan
   * moved it, and the worker has not applied the change) is still ready while another healthy slot
   * of the same host running the same model reports that instance id READY or EVICTED: the worker
   * there serves it from the old slot until it has opened the new one, and the gateway reaches that
   * worker through the partitions and load of the reporting slot.
   */
  public static SortedMap<String, Route> routes(PlanInputs in, PlanSettings settings,
      Collection<SlotAssignment> assignments) {
    Map<String, List<RouteInstance>> instances = new TreeMap<>();
    List<SlotAssignment> ordered = new ArrayList<>(assignments);
    ordered.sort(Comparator.comparing((SlotAssignment a) -> a.getHost()).thenComparing(SlotAssignment::getSlot));
    for (SlotAssignment a : ordered) {
      SlotStatus assigned = in.slots().get(Keys.hostSlot(a.getHost(), a.getSlot()));
      for (AssignedServiceModel asm : a.getServiceModels()) {
        String reason = notReady(a, asm, assigned);
        SlotStatus status = assigned;
        if (reason != null) {
          SlotStatus elsewhere = servingElsewhere(in.slots().values(), a, asm.getInstanceId());
          if (elsewhere != null) {
            reason = null;
            status = elsewhere;
          }
        }
        instances.computeIfAbsent(asm.getServiceModel(), k -> new ArrayList<>()).add(RouteInstance.newBuilder()
            .setInstanceId(asm.getInstanceId()).setHost(a.getHost()).setSlot(a.getSlot())
            .setReady(reason == null).setReason(reason)
            .setPartitions(requestPartitions(status, settings.topics().requests(a.getModel()))) // one topic per base model
            .setInFlight(status == null ? 0 : Math.max(0, status.getInFlight()))
            .setQueueDepth(status == null ? 0 : Math.max(0, status.getQueueDepth())).build());
      }
    }
    SortedMap<String, Route> out = new TreeMap<>();
    for (ServiceModel sm : in.serviceModels().values()) {
      List<RouteInstance> list = instances.getOrDefault(sm.getName(), List.of());
      list = new ArrayList<>(list);
      list.sort(Comparator.comparing(RouteInstance::getInstanceId));
      int ready = (int) list.stream().filter(RouteInstance::getReady).count();
      out.put(sm.getName(), Route.newBuilder().setServiceModel(sm.getName())
          .setRequestTopic(settings.topics().requests(sm.getBaseModel())).setReadyInstances(ready)
          .setInstances(list).build());
    }
    return out;
  }

  /**
   * The partitions of {@code topic} the slot's worker reports owning, ascending and without
   * duplicates (several entries for one topic are merged); empty without a status.
   */
  static List<Integer> requestPartitions(SlotStatus status, String topic) {
    if (status == null) {
      return List.of();
    }
    SortedSet<Integer> partitions = new TreeSet<>();
    for (TopicPartitions tp : status.getRequestPartitions()) {
      if (tp.getTopic().equals(topic)) {
        for (Integer p : tp.getPartitions()) {
          if (p != null && p >= 0) {
            partitions.add(p);
          }
        }
      }
    }
    return new ArrayList<>(partitions);
  }

  /** A healthy slot of the assignment's host, running its model, that reports the instance ready; null if none. */
  private static SlotStatus servingElsewhere(Collection<SlotStatus> statuses, SlotAssignment a, String instanceId) {
    for (SlotStatus s : statuses) {
      if (!s.getHost().equals(a.getHost()) || !s.getModel().equals(a.getModel())
          || !(s.getHealth().equals("READY") || s.getHealth().equals("DEGRADED"))) {
        continue;
      }
      for (MountStatus m : s.getServiceModels()) {
        if (m.getInstanceId().equals(instanceId) && (m.getState().equals("READY") || m.getState().equals("EVICTED"))) {
          return s;
        }
      }
    }
    return null;
  }

  private static String notReady(SlotAssignment a, AssignedServiceModel asm, SlotStatus status) {
    String where = a.getHost() + Keys.SEP + a.getSlot();
    if (status == null) {
      return "no status from " + where + " yet";
    }
    if (!status.getModel().equals(a.getModel()) || !status.getVersion().equals(a.getVersion())) {
      return where + " runs " + status.getModel() + "/" + status.getVersion() + ", the plan assigns "
          + a.getModel() + "/" + a.getVersion();
    }
    if (!status.getHealth().equals("READY") && !status.getHealth().equals("DEGRADED")) {
      return where + " is " + status.getHealth();
    }
    for (MountStatus m : status.getServiceModels()) {
      if (m.getInstanceId().equals(asm.getInstanceId())) {
        if (m.getState().equals("READY") || m.getState().equals("EVICTED")) {
          return null;
        }
        return "instance " + asm.getInstanceId() + " is " + m.getState()
            + (m.getReason() == null ? "" : ": " + m.getReason());
      }
    }
    return where + " does not report instance " + asm.getInstanceId() + " yet";
  }
}

package io.partita.planner.stream;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.ModelVersion;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ServiceMapping;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionChoice;
import io.partita.common.Topic;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.AskState;
import io.partita.planner.plan.AskedGrouping;
import io.partita.planner.plan.AssignmentPlans;
import io.partita.planner.plan.InputTables;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.MappingMatrix;
import io.partita.planner.plan.MappingPlans;
import io.partita.planner.plan.MeasurementAsks;
import io.partita.planner.plan.PartitionPlans;
import io.partita.planner.plan.PlanInputs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.plan.Plans;
import io.partita.planner.plan.RouteChoices;
import io.partita.planner.plan.RoutePlans;
import io.partita.planner.plan.ServedGroupings;
import io.partita.planner.plan.SlotRanking;
import io.partita.planner.plan.VersionPlans;
import io.partita.planning.mapping.MappingProblem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-plans what the fold processors marked stale, at most once per debounce interval (a wall-clock
 * punctuation, so a burst of timing events costs one planning pass), by calling the plan-table
 * classes ({@link VersionPlans}, {@link MappingPlans}, {@link PartitionPlans}, {@link
 * AssignmentPlans}, {@link RoutePlans}). Each plan record is compared byte for byte with the last
 * one emitted for its key (kept in {@code plans-store}) and forwarded only when it differs; a key
 * that no longer has a plan gets a tombstone. Order of a pass: versions, mappings, partitions,
 * assignments, routes; each stage re-plans only the keys its inputs or the earlier stages changed.
 *
 * <p><b>What a pass touches.</b> The input tables are kept decoded and indexed ({@link
 * InputTables}: the fold processors hand over each store write), and the live plan is read
 * through {@link LivePlan}'s indexes, so a pass reads what it re-plans and not whole tables.
 * Versions: the changed model/host pairs, and the hosts of the model that predict a version from
 * other hosts ({@link VersionPlans#predictingHosts}). Partitions: per host. Assignments: the slots
 * of each host whose partitions changed, and the instances of each base model whose slots or
 * service models changed (the allocator's problem splits by base model). Routes: the service
 * models whose instances' slots, slot status or catalog record changed, those whose route lists
 * on demand a slot that closed, changed version or reported a new status, and those whose listed
 * slots a slot that opened outranks one of ({@link RouteChoices}: each route's on-demand choice,
 * kept between passes, so that a slot joining a base model is ranked once against each of its
 * service models instead of every slot being ranked for each). The routes of one base model
 * decode its slots once. The mapping is one
 * problem over the cluster and re-planned as a whole when touched. With {@code exhaustive}, every
 * key of every table is re-planned in each pass through the whole-problem functions instead:
 * the tests check that both give the same plan.
 */
final class PlanProcessor implements Processor<String, Object, String, byte[]> {
  private static final Logger log = LoggerFactory.getLogger(PlanProcessor.class);

  private final PlanSettings settings;
  private final Duration debounce;
  private final Codecs codecs;
  private final PlannerMetrics metrics;
  private final boolean exhaustive;
  private final Map<Class<?>, RecordCodec<?>> codecCache = new HashMap<>();
  private final InputTables tables = new InputTables();
  /** The mapping's matrix between passes (rebuilt when the task starts). */
  private MappingMatrix matrix = new MappingMatrix();
  /**
   * The mapping problem the running mapping records were last planned on (null when the task starts:
   * its first pass that maps plans afresh): while today's stays within {@code planner.mapping.drift}
   * of it, the running mapping stands.
   */
  private MappingProblem mapped;
  /** The on-demand slots of each service model's live route, as last routed (empty when the task starts). */
  private final RouteChoices choices;
  /** Whether {@link #tables} holds the stores (false until the first pass after the task starts). */
  private boolean loaded;
  private ProcessorContext<String, byte[]> context;
  private KeyValueStore<String, byte[]> dirty;
  private LivePlan live;
  private final Map<InputKind, KeyValueStore<String, byte[]>> inputs = new TreeMap<>();
  private KeyValueStore<String, byte[]> groupings;
  private KeyValueStore<String, byte[]> asks;
  private KeyValueStore<String, byte[]> asked;

  PlanProcessor(PlanSettings settings, Codecs codecs, Duration debounce, PlannerMetrics metrics, boolean exhaustive) {
    this.settings = settings;
    this.metrics = metrics;
    this.codecs = codecs;
    this.debounce = debounce;
    this.exhaustive = exhaustive;
    this.choices = new RouteChoices(settings.routeOnDemandLimit());
  }

  @Override
  public void init(ProcessorContext<String, byte[]> context) {
    this.context = context;
    dirty = context.getStateStore(PlannerTopologyNames.DIRTY_STORE);
    live = new LivePlan(context.getStateStore(PlannerTopologyNames.PLANS_STORE), settings.topics(), codecs);
    for (InputKind kind : InputKind.values()) {
      inputs.put(kind, context.getStateStore(kind.store()));
    }
    groupings = context.getStateStore(InputKind.GROUPING_TIMINGS_STORE);
    asks = context.getStateStore(PlannerTopologyNames.ASKS_STORE);
    asked = context.getStateStore(PlannerTopologyNames.ASKED_STORE);
    // A task started (again): the stores may have been restored, so the decoded tables and the
    // plan's indexes are rebuilt from them at the first pass.
    tables.clear();
    matrix = new MappingMatrix();
    mapped = null;
    choices.clear();
    loaded = false;
    context.schedule(debounce, PunctuationType.WALL_CLOCK_TIME, this::planStale);
  }

  /** A store write of a fold processor ({@link InputChange}): the decoded tables follow it. */
  @Override
  public void process(Record<String, Object> record) {
    if (loaded && record.value() instanceof InputChange change) {
      tables.put(change.table(), change.key(), change.value());
    }
  }

  /**
   * One planning pass over the stale scopes, then the measurements to ask for on the hosts it
   * re-planned or whose asking waited for this time; does nothing when nothing changed or waits.
   *
   * @param now the punctuation's wall-clock time: the clock of asking (rate limit, timeout), never
   *     of plan records
   */
  void planStale(long now) {
    Set<String> stale = new TreeSet<>();
    try (KeyValueIterator<String, byte[]> it = dirty.all()) {
      it.forEachRemaining(kv -> stale.add(kv.key));
    }
    Set<String> askHosts = settings.measure().enabled() ? dueAskHosts(now) : new TreeSet<>();
    if (stale.isEmpty() && askHosts.isEmpty()) {
      return;
    }
    if (!stale.isEmpty()) {
      stale.forEach(dirty::delete);
      Pass pass = metrics.pass().record(() -> {
        Pass p = new Pass(metrics.stage("inputs").record(this::inputs), stale);
        p.run();
        return p;
      });
      log.debug("Planned {} stale scopes: {} plan records changed", stale.size(), pass.changed);
      if (settings.measure().enabled()) {
        askHosts.addAll(pass.partitionHosts);
      }
    }
    if (!askHosts.isEmpty()) {
      metrics.stage("asks").record(() -> ask(askHosts, now));
    }
  }

  /** The decoded input tables, loaded from the stores once after the task starts. */
  private PlanInputs inputs() {
    if (!loaded) {
      tables.clear();
      load(InputKind.CATALOG_MODELS, inputs.get(InputKind.CATALOG_MODELS), InputTables.Table.VERSIONS, ModelVersion.class);
      load(InputKind.CATALOG_SERVICES, inputs.get(InputKind.CATALOG_SERVICES), InputTables.Table.SERVICE_MODELS,
          ServiceModel.class);
      load(InputKind.HOST_ENVIRONMENTS, inputs.get(InputKind.HOST_ENVIRONMENTS), InputTables.Table.HOSTS,
          HostEnvironment.class);
      load(InputKind.HOST_LIVENESS, inputs.get(InputKind.HOST_LIVENESS), InputTables.Table.LIVENESS, HostLiveness.class);
      load(InputKind.SLOT_STATUS, inputs.get(InputKind.SLOT_STATUS), InputTables.Table.SLOTS, SlotStatus.class);
      load(InputKind.DEMAND, inputs.get(InputKind.DEMAND), InputTables.Table.DEMAND, Demand.class);
      load(InputKind.TIMINGS, inputs.get(InputKind.TIMINGS), InputTables.Table.TIMINGS, TimingEvent.class);
      load(InputKind.TIMINGS, groupings, InputTables.Table.GROUPINGS, TimingEvent.class);
      loaded = true;
    }
    return tables.view();
  }

  /** A store of input records, decoded as records of the topic they were read from, into the tables. */
  private <T extends SpecificRecord> void load(InputKind kind, KeyValueStore<String, byte[]> store,
      InputTables.Table table, Class<T> type) {
    String topic = kind.topic(settings.topics());
    RecordCodec<T> codec = codec(type);
    try (KeyValueIterator<String, byte[]> it = store.all()) {
      it.forEachRemaining(kv -> tables.put(table, kv.key, codec.decode(topic, kv.value)));
    }
  }

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> RecordCodec<T> codec(Class<T> type) {
    return (RecordCodec<T>) codecCache.computeIfAbsent(type, t -> codecs.codec(type));
  }

  /** Hosts where a wanted measurement could not be asked for before and may be now. */
  private Set<String> dueAskHosts(long now) {
    Set<String> hosts = new TreeSet<>();
    int[] outstanding = {0};
    try (KeyValueIterator<String, byte[]> it = asks.all()) {
      it.forEachRemaining(kv -> {
        AskState state = AskState.decode(kv.value);
        if (state.outstanding(now, settings.measure())) {
          outstanding[0]++;
        }
        if (state.lookAgainAtMs() > 0 && state.lookAgainAtMs() <= now) {
          hosts.add(kv.key.substring(0, kv.key.indexOf(Keys.SEP)));
        }
      });
    }
    metrics.outstanding(outstanding[0]);
    return hosts;
  }

  /** Asks the profilers of these hosts for grouping-mode measurements of the live partition plans. */
  private void ask(Set<String> hosts, long now) {
    for (String host : hosts) {
      List<PartitionPlan> onHost = new ArrayList<>();
      for (String key : live.partitionKeys(host)) {
        onHost.add(live.get(PlanTable.PARTITIONS, key, PartitionPlan.class));
      }
      for (String pool : Plans.POOLS) {
        List<PartitionPlan> plans = new ArrayList<>();
        onHost.forEach(p -> {
          if (p.getPool().equals(pool)) {
            plans.add(p);
          }
        });
        String hostPool = Keys.hostPool(host, pool);
        AskState state = AskState.decode(asks.get(hostPool));
        if (plans.isEmpty() && state == null) {
          continue;
        }
        MeasurementAsks.Decision decision = MeasurementAsks.decide(host, pool, plans, state,
            key -> askedRecently(key, now), now, settings.measure());
        if (decision.request() != null) {
          for (String key : decision.state().open()) {
            asked.put(key, new AskedGrouping(now, false).encode());
          }
          byte[] bytes = settings.topics().profileRequests(codecs).encode(decision.request());
          context.forward(new Record<>(host, bytes, Math.max(0, context.currentStreamTimeMs())),
              PlannerTopologyNames.PROFILE_REQUEST_SINK);
          metrics.requested();
          log.debug("Asked {} for grouping-mode measurements {} of {}/{} ({})", hostPool,
              decision.request().getGroupings(), decision.request().getModel(), decision.request().getVersion(),
              decision.request().getRequestId());
        }
        asks.put(hostPool, decision.state().encode());
      }
    }
  }

  /** The partition-plan metrics of one written record (null: the key's plan was removed). */
  private void observeChoice(String key, PartitionPlan plan) {
    if (plan == null) {
      String[] parts = key.split(Keys.SEP, 4);
      if (parts.length == 4) {
        metrics.measuredOverPredicted(parts[0], parts[1], parts[2], parts[3], null);
      }
      return;
    }
    if (plan.getPlanned() && !plan.getDefaultPlan()) {
      metrics.choice(plan.getBasis());
    }
    Double ratio = plan.getPlanned() && plan.getMeasuredThroughput() != null && plan.getPredictedThroughput() > 0
        ? plan.getMeasuredThroughput() / plan.getPredictedThroughput() : null;
    metrics.measuredOverPredicted(plan.getModel(), plan.getVersion(), plan.getHost(), plan.getPool(), ratio);
  }

  private boolean askedRecently(String groupingKey, long now) {
    AskedGrouping at = AskedGrouping.decode(asked.get(groupingKey));
    return at != null && at.recent(now, settings.measure());
  }

  private final class Pass {
    private final PlanInputs in;
    private boolean allVersions;
    /** Models whose version is re-planned on every host. */
    private final Set<String> versionModels = new TreeSet<>();
    /** model -> hosts whose timings of it changed. */
    private final Map<String, Set<String>> versionsAt = new TreeMap<>();
    /** Hosts whose environment changed: every model's version there. */
    private final Set<String> versionHosts = new TreeSet<>();
    private final Set<String> partitionHosts = new TreeSet<>();
    private final Set<String> partitionModels = new TreeSet<>();
    /** Hosts whose slots reported serving evidence: their running groupings may be measured from it. */
    private final Set<String> servingHosts = new TreeSet<>();
    private boolean mapping;
    private boolean allAssignments;
    private final Set<String> assignmentHosts = new TreeSet<>();
    private final Set<String> assignmentModels = new TreeSet<>();
    private boolean allRoutes;
    private final Set<String> routeHosts = new TreeSet<>();
    private final Set<String> routeServices = new TreeSet<>();
    /** base model -> its slots that closed, changed model or changed version: the routes listing them change. */
    private final Map<String, Set<String>> routeSlotsChanged = new TreeMap<>();
    /** base model -> its slots that opened: a route changes if one outranks an entry of it ({@link RouteChoices}). */
    private final Map<String, Set<String>> routeSlotsOpened = new TreeMap<>();
    /** model -> hosts whose timings of it or chosen version changed: cells of the mapping's matrix. */
    private final Map<String, Set<String>> matrixHosts = new TreeMap<>();
    int changed;

    Pass(PlanInputs in, Set<String> stale) {
      this.in = in;
      for (String scope : stale) {
        if (scope.equals(Scopes.VERSIONS_ALL)) {
          allVersions = true;
        } else if (scope.startsWith(Scopes.VERSIONS_MODEL)) {
          versionModels.add(scope.substring(Scopes.VERSIONS_MODEL.length()));
        } else if (scope.startsWith(Scopes.VERSIONS_AT)) {
          String modelHost = scope.substring(Scopes.VERSIONS_AT.length());
          int cut = modelHost.indexOf(Keys.SEP);
          versionsAt.computeIfAbsent(modelHost.substring(0, cut), m -> new TreeSet<>()).add(modelHost.substring(cut + 1));
        } else if (scope.startsWith(Scopes.VERSIONS_HOST)) {
          versionHosts.add(scope.substring(Scopes.VERSIONS_HOST.length()));
        } else if (scope.startsWith(Scopes.PARTITIONS_HOST)) {
          partitionHosts.add(scope.substring(Scopes.PARTITIONS_HOST.length()));
        } else if (scope.startsWith(Scopes.PARTITIONS_MODEL)) {
          partitionModels.add(scope.substring(Scopes.PARTITIONS_MODEL.length()));
        } else if (scope.startsWith(Scopes.SERVING_HOST)) {
          servingHosts.add(scope.substring(Scopes.SERVING_HOST.length()));
        } else if (scope.equals(Scopes.MAPPING)) {
          mapping = true;
        } else if (scope.equals(Scopes.ASSIGNMENTS)) {
          allAssignments = true;
        } else if (scope.startsWith(Scopes.ASSIGNMENTS_HOST)) {
          assignmentHosts.add(scope.substring(Scopes.ASSIGNMENTS_HOST.length()));
        } else if (scope.startsWith(Scopes.ASSIGNMENTS_MODEL)) {
          assignmentModels.add(scope.substring(Scopes.ASSIGNMENTS_MODEL.length()));
        } else if (scope.equals(Scopes.ROUTES)) {
          allRoutes = true;
        } else if (scope.startsWith(Scopes.ROUTES_HOST)) {
          routeHosts.add(scope.substring(Scopes.ROUTES_HOST.length()));
        } else if (scope.startsWith(Scopes.ROUTES_SERVICE)) {
          routeServices.add(scope.substring(Scopes.ROUTES_SERVICE.length()));
        }
      }
      if (exhaustive) {
        allVersions = true;
        mapping = true;
        partitionHosts.addAll(in.hosts().keySet());
        partitionHosts.addAll(live.partitionHosts());
        allAssignments = true;
        allRoutes = true;
      }
    }

    void run() {
      metrics.stage("versions").record(this::planVersions);
      if (mapping) {
        metrics.stage("mappings").record(this::planMappings);
      }
      metrics.stage("partitions").record(this::planPartitions);
      metrics.stage("serving").record(this::recordServing);
      metrics.stage("assignments").record(this::planAssignments);
      metrics.stage("routes").record(this::planRoutes);
    }

    private void planVersions() {
      Set<String> models = new TreeSet<>(versionModels);
      models.addAll(versionsAt.keySet());
      if (allVersions || !versionHosts.isEmpty()) {
        models.addAll(in.catalogModels().keySet());
        models.addAll(live.versionModels());
      }
      for (String model : models) {
        VersionPlans.Evidence evidence = VersionPlans.evidence(in, model);
        Set<String> hosts = new TreeSet<>();
        if (allVersions || versionModels.contains(model)) {
          hosts.addAll(in.hosts().keySet());
          hosts.addAll(live.versionHosts(model));
        } else {
          hosts.addAll(versionsAt.getOrDefault(model, Set.of()));
          hosts.addAll(versionHosts);
          hosts.addAll(VersionPlans.predictingHosts(in, model));
        }
        for (String host : hosts) {
          String running = live.chosen(model, host);
          VersionChoice choice = VersionPlans.versionChoice(in, model, host, running, settings.hysteresis(), evidence);
          if (emit(PlanTable.VERSIONS, Keys.modelHost(model, host), choice)) {
            partitionHosts.add(host);
            mapping = true;
            if (!Objects.equals(running, choice == null ? null : choice.getChosenVersion())) {
              matrixHosts.computeIfAbsent(model, m -> new TreeSet<>()).add(host);
            }
          }
        }
      }
    }

    private void planMappings() {
      SortedMap<String, ServiceMapping> running = live.all(PlanTable.MAPPINGS, ServiceMapping.class);
      SortedMap<String, Set<String>> before = MappingPlans.kinds(running.values());
      MappingPlans.Matrix cells;
      if (exhaustive) {
        cells = MappingMatrix.full(in, settings, live::chosenVersion);
      } else {
        versionsAt.forEach((model, hosts) -> matrixHosts.computeIfAbsent(model, m -> new TreeSet<>()).addAll(hosts));
        // A host's environment scales its times (its CPU quota, Plans.batchTimeMs): its cells of every model.
        for (String model : versionHosts.isEmpty() ? Set.<String>of() : in.catalogModels().keySet()) {
          matrixHosts.computeIfAbsent(model, m -> new TreeSet<>()).addAll(versionHosts);
        }
        Set<String> models = allVersions ? in.catalogModels().keySet() : versionModels;
        cells = matrix.update(in, settings, live::chosenVersion, matrixHosts, models);
      }
      MappingProblem problem = MappingPlans.problemOrNull(in, settings, cells);
      if (problem != null && mapped != null && !running.isEmpty() && problem.within(mapped, settings.mappingDrift())) {
        // Every figure is within the drift of the problem the running mapping was planned on (hosts
        // joining and leaving a class of alike pools, timing noise): any mapping's cost moved by
        // less than the hysteresis a fresh one must beat the running one by, and planning afresh
        // (the improvement pass, hundreds of ms at 500 models) would keep it. Its records stand.
        return;
      }
      emitAll(PlanTable.MAPPINGS,
          MappingPlans.mappings(in, settings, cells, problem, live::chosenVersion, running.values()));
      mapped = problem;
      SortedMap<String, Set<String>> after = MappingPlans.kinds(live.all(PlanTable.MAPPINGS, ServiceMapping.class).values());
      Set<String> models = new TreeSet<>(before.keySet());
      models.addAll(after.keySet());
      for (String model : models) {
        if (!Objects.equals(before.get(model), after.get(model))) {
          partitionModels.add(model);
        }
      }
    }

    private void planPartitions() {
      if (!partitionModels.isEmpty()) {
        // A model's catalog, demand or mapped kind changed: every host's pools are split again (a
        // model nobody measured yet gets a default partition on every host), and hosts that have
        // partitions without an environment any more lose them.
        partitionHosts.addAll(in.hosts().keySet());
        partitionHosts.addAll(live.partitionHosts());
      }
      if (partitionHosts.isEmpty()) {
        return;
      }
      // A plan predicted from another host follows that host's timings, and a more similar host
      // that measures; a default plan becomes a predicted one once a host it can be predicted from
      // has timings and an environment (in either order): their hosts are re-planned with every
      // pass that re-plans partitions (they are few, and only until their own timings arrive).
      partitionHosts.addAll(live.provisionalHosts());
      SortedMap<String, Set<String>> kinds = MappingPlans.kinds(live.all(PlanTable.MAPPINGS, ServiceMapping.class).values());
      for (String host : partitionHosts) {
        SortedMap<String, PartitionPlan> running = new TreeMap<>();
        for (String key : live.partitionKeys(host)) {
          running.put(key, live.get(PlanTable.PARTITIONS, key, PartitionPlan.class));
        }
        SortedMap<String, PartitionPlan> planned = PartitionPlans.partitions(in, settings, host, live.chosenOn(host),
            kinds, running);
        boolean any = false;
        for (Map.Entry<String, PartitionPlan> e : planned.entrySet()) {
          any |= emit(PlanTable.PARTITIONS, e.getKey(), e.getValue());
        }
        for (String key : running.keySet()) {
          if (!planned.containsKey(key)) {
            any |= emit(PlanTable.PARTITIONS, key, null);
          }
        }
        if (any || ServedGroupings.servesOn(in, host)) {
          assignmentHosts.add(host);
        }
      }
    }

    /**
     * The grouping-mode measurements the serving slots' evidence gives ({@link ServedGroupings}),
     * published on the timings topic; they come back through {@code fold-timings} like a profiler's
     * and re-plan their host.
     */
    private void recordServing() {
      if (servingHosts.isEmpty() || !settings.serving().enabled()) {
        return;
      }
      Topic<TimingEvent> timings = settings.topics().profileTimings(codecs);
      for (String host : servingHosts) {
        List<PartitionPlan> partitions = new ArrayList<>();
        for (String key : live.partitionKeys(host)) {
          partitions.add(live.get(PlanTable.PARTITIONS, key, PartitionPlan.class));
        }
        List<SlotAssignment> slots = new ArrayList<>();
        for (String key : live.slotsOfHost(host)) {
          slots.add(live.get(PlanTable.ASSIGNMENTS, key, SlotAssignment.class));
        }
        for (TimingEvent e : ServedGroupings.measurements(in, settings, host, partitions, slots)) {
          context.forward(new Record<>(Keys.grouping(e), timings.encode(e), Math.max(0, context.currentStreamTimeMs())),
              PlannerTopologyNames.SERVING_TIMINGS_SINK);
          metrics.servingMeasurement();
          log.debug("Serving on {}/{} measured {}/{} {} at {}/s ({} runs)", e.getHost(), e.getPool(), e.getModel(),
              e.getVersion(), e.getGrouping(), e.getThroughput(), e.getSamples());
        }
      }
    }

    private void planAssignments() {
      if (allAssignments) {
        List<PartitionPlan> partitions = new ArrayList<>();
        for (String host : live.partitionHosts()) {
          for (String key : live.partitionKeys(host)) {
            partitions.add(live.get(PlanTable.PARTITIONS, key, PartitionPlan.class));
          }
        }
        Map<String, SlotAssignment> running = new HashMap<>();
        for (String host : live.slotHosts()) {
          live.slotsOfHost(host).forEach(key -> running.put(key, live.get(PlanTable.ASSIGNMENTS, key, SlotAssignment.class)));
        }
        emitAll(PlanTable.ASSIGNMENTS, AssignmentPlans.assignments(in, settings, partitions, running));
        return;
      }
      if (assignmentHosts.isEmpty() && assignmentModels.isEmpty()) {
        return;
      }
      // The slots of each host whose partitions changed, laid out again; base models whose set of
      // slots changed get their instances allocated again, over all their slots.
      Map<String, SortedMap<String, SlotAssignment>> laidOut = new TreeMap<>();
      Map<String, Map<String, SlotAssignment>> runningOf = new HashMap<>();
      Set<String> reallocate = new TreeSet<>(assignmentModels);
      Map<String, List<String>> added = new HashMap<>();
      Map<String, List<String>> removed = new HashMap<>();
      for (String host : assignmentHosts) {
        List<PartitionPlan> partitions = new ArrayList<>();
        for (String key : live.partitionKeys(host)) {
          partitions.add(live.get(PlanTable.PARTITIONS, key, PartitionPlan.class));
        }
        Map<String, SlotAssignment> running = new HashMap<>();
        live.slotsOfHost(host).forEach(key -> running.put(key, live.get(PlanTable.ASSIGNMENTS, key, SlotAssignment.class)));
        SortedMap<String, SlotAssignment> slots = AssignmentPlans.slots(in, settings, partitions, running);
        runningOf.put(host, running);
        for (String key : live.slotsOfHost(host)) {
          SlotAssignment now = slots.get(key);
          String before = live.slotModel(key);
          if (now == null || !now.getModel().equals(before)) {
            removed.computeIfAbsent(before, m -> new ArrayList<>()).add(key);
          }
        }
        for (Map.Entry<String, SlotAssignment> e : slots.entrySet()) {
          if (!e.getValue().getModel().equals(live.slotModel(e.getKey()))) {
            added.computeIfAbsent(e.getValue().getModel(), m -> new ArrayList<>()).add(e.getKey());
          }
        }
        laidOut.put(host, slots);
      }
      // A base model whose slots changed is allocated again unless the change provably leaves its
      // instances where they are (a host joining adds a slot to every base model).
      Set<String> slotChanges = new TreeSet<>(added.keySet());
      slotChanges.addAll(removed.keySet());
      for (String model : slotChanges) {
        if (reallocate.contains(model)) {
          continue;
        }
        // The slots that hold an instance, and those removed: a slot holding none says nothing.
        Map<String, List<String>> held = new HashMap<>();
        live.occupiedSlotsOfModel(model).forEach(key -> held.put(key, live.slotInstances(key)));
        removed.getOrDefault(model, List.of()).forEach(key -> held.put(key, live.slotInstances(key)));
        int wanted = 0;
        for (ServiceModel sm : in.serviceModelsOf(model).values()) {
          wanted += Math.max(0, sm.getInstances());
        }
        if (!AssignmentPlans.allocationUnchanged(held, added.getOrDefault(model, List.of()),
            removed.getOrDefault(model, List.of()), wanted)) {
          reallocate.add(model);
        }
      }
      Map<String, List<String>> laidOutByModel = new HashMap<>();
      laidOut.values().forEach(slots -> slots.forEach((key, a) ->
          laidOutByModel.computeIfAbsent(a.getModel(), m -> new ArrayList<>()).add(key)));
      Map<String, List<AssignedServiceModel>> instances = new HashMap<>();
      List<String> elsewhere = new ArrayList<>();
      for (String model : reallocate) {
        List<String> slotsOfModel = new ArrayList<>(laidOutByModel.getOrDefault(model, List.of()));
        for (String key : live.slotsOfModel(model)) {
          if (!laidOut.containsKey(key.substring(0, key.indexOf(Keys.SEP)))) {
            slotsOfModel.add(key);
            elsewhere.add(key);
          }
        }
        instances.putAll(AssignmentPlans.instancesOn(in, model, slotsOfModel));
      }
      for (Map.Entry<String, SortedMap<String, SlotAssignment>> host : laidOut.entrySet()) {
        Set<String> gone = new TreeSet<>(live.slotsOfHost(host.getKey()));
        for (Map.Entry<String, SlotAssignment> e : host.getValue().entrySet()) {
          SlotAssignment slot = e.getValue();
          List<AssignedServiceModel> of;
          if (reallocate.contains(slot.getModel())) {
            of = instances.getOrDefault(e.getKey(), List.of());
          } else {
            // The base model's instances stay where they are: an existing slot keeps its own, a new one has none.
            SlotAssignment before = runningOf.get(host.getKey()).get(e.getKey());
            of = before == null || !before.getModel().equals(slot.getModel()) ? List.of() : before.getServiceModels();
          }
          emit(PlanTable.ASSIGNMENTS, e.getKey(), AssignmentPlans.withInstances(slot, of));
          gone.remove(e.getKey());
        }
        for (String key : gone) {
          emit(PlanTable.ASSIGNMENTS, key, null);
        }
      }
      for (String key : elsewhere) {
        // The slot stays; its instances may move. Its record is decoded and written again only if
        // they did, or if its base model's service models changed (a weight file): a host joining
        // re-allocates every base model, and encoding all their slots cost seconds at 1,000 hosts.
        List<AssignedServiceModel> now = instances.getOrDefault(key, List.of());
        List<String> ids = new ArrayList<>();
        now.forEach(asm -> ids.add(asm.getInstanceId()));
        if (ids.equals(live.slotInstances(key)) && !assignmentModels.contains(live.slotModel(key))) {
          continue;
        }
        SlotAssignment a = live.get(PlanTable.ASSIGNMENTS, key, SlotAssignment.class);
        emit(PlanTable.ASSIGNMENTS, key, AssignmentPlans.withInstances(a, now));
      }
    }

    private void planRoutes() {
      if (allRoutes) {
        List<SlotAssignment> all = new ArrayList<>();
        for (String host : live.slotHosts()) {
          for (String key : live.slotsOfHost(host)) {
            all.add(live.get(PlanTable.ASSIGNMENTS, key, SlotAssignment.class));
          }
        }
        emitAll(PlanTable.ROUTES, RoutePlans.routes(in, settings, all));
        // The whole-problem function does not say what it chose: every service model is unknown.
        choices.clear();
        return;
      }
      // Slots decoded once in this stage: the routes of one base model's service models share them.
      Map<String, SlotAssignment> decoded = new HashMap<>();
      Function<String, SlotAssignment> slot = key -> decoded.computeIfAbsent(key,
          k -> live.get(PlanTable.ASSIGNMENTS, k, SlotAssignment.class));
      // A route changes with its planned instances' slots (routeServices), with the slots it lists
      // on demand, and with a slot joining its base model that outranks one it lists; a service
      // model whose choice is not known yet is routed whenever its base model's slots change.
      Set<String> services = new TreeSet<>(routeServices);
      Set<String> models = new TreeSet<>(routeSlotsOpened.keySet());
      models.addAll(routeSlotsChanged.keySet());
      for (String host : routeHosts) {
        for (String key : live.slotsOfHost(host)) {
          slot.apply(key).getServiceModels().forEach(asm -> services.add(asm.getServiceModel()));
          services.addAll(choices.listing(key));
          models.add(live.slotModel(key));
        }
      }
      routeSlotsChanged.values().forEach(keys -> keys.forEach(key -> services.addAll(choices.listing(key))));
      for (Map.Entry<String, Set<String>> opened : routeSlotsOpened.entrySet()) {
        for (String name : in.serviceModelsOf(opened.getKey()).keySet()) {
          for (String key : opened.getValue()) {
            if (choices.wouldTake(name, key)) {
              services.add(name);
              break;
            }
          }
        }
      }
      for (String model : models) {
        for (String name : in.serviceModelsOf(model).keySet()) {
          if (!choices.known(name)) {
            services.add(name);
          }
        }
      }
      // The on-demand entries are chosen by key first: only the slots the route lists are decoded.
      Map<String, SlotRanking> rankings = new HashMap<>();
      for (String name : services) {
        ServiceModel sm = in.serviceModels().get(name);
        if (sm == null) {
          choices.remove(name);
          emit(PlanTable.ROUTES, name, null);
          continue;
        }
        List<SlotAssignment> holding = new ArrayList<>();
        for (String key : live.slotsOfServiceModel(name)) {
          holding.add(slot.apply(key));
        }
        SlotRanking ranking = rankings.computeIfAbsent(sm.getBaseModel(), m -> new SlotRanking(live.slotsOfModel(m)));
        List<String> chosen = ranking.highest(name, live.slotsOfServiceModel(name), settings.routeOnDemandLimit());
        choices.put(name, chosen);
        List<SlotAssignment> baseSlots = new ArrayList<>();
        for (String key : chosen) {
          baseSlots.add(slot.apply(key));
        }
        emit(PlanTable.ROUTES, name, RoutePlans.route(in, settings, sm, holding, baseSlots));
      }
    }

    /** Emits every planned record and a tombstone for every live key of the table not planned now. */
    private <T extends SpecificRecord> boolean emitAll(PlanTable table, SortedMap<String, T> planned) {
      boolean any = false;
      List<String> gone = new ArrayList<>();
      for (String key : live.keys(table)) {
        if (!planned.containsKey(key)) {
          gone.add(key);
        }
      }
      for (Map.Entry<String, T> e : planned.entrySet()) {
        any |= emit(table, e.getKey(), e.getValue());
      }
      for (String key : gone) {
        any |= emit(table, key, null);
      }
      return any;
    }

    /** Forwards the record (or a tombstone for null) when its bytes differ from the live ones. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private boolean emit(PlanTable table, String key, SpecificRecord value) {
      byte[] old = live.bytes(table, key);
      byte[] bytes = value == null ? null : ((Topic) table.topic(settings.topics(), codecs)).encode(value);
      if (bytes == null ? old == null : old != null && Arrays.equals(old, bytes)) {
        return false;
      }
      if (table == PlanTable.ASSIGNMENTS) {
        // The routes of the service models whose instances this slot held or holds now.
        SlotAssignment before = old == null ? null : live.get(PlanTable.ASSIGNMENTS, key, SlotAssignment.class);
        SlotAssignment after = (SlotAssignment) value;
        if (before != null) {
          before.getServiceModels().forEach(asm -> routeServices.add(asm.getServiceModel()));
        }
        if (after != null) {
          after.getServiceModels().forEach(asm -> routeServices.add(asm.getServiceModel()));
        }
        // Every slot of a base model is a candidate for the on-demand entries of each of its service
        // models: a slot closing or changing model version changes the routes that list it, one
        // opening those it outranks an entry of (its instances alone change only theirs, above).
        boolean otherModel = before != null && after != null && !before.getModel().equals(after.getModel());
        if (before != null && (after == null || otherModel || !Objects.equals(before.getVersion(), after.getVersion()))) {
          routeSlotsChanged.computeIfAbsent(before.getModel(), m -> new TreeSet<>()).add(key);
        }
        if (after != null && (before == null || otherModel)) {
          routeSlotsOpened.computeIfAbsent(after.getModel(), m -> new TreeSet<>()).add(key);
        }
      }
      live.put(table, key, value, bytes, old);
      context.forward(new Record<>(key, bytes, Math.max(0, context.currentStreamTimeMs())), table.sink());
      changed++;
      metrics.planRecord(table.id());
      if (table == PlanTable.PARTITIONS) {
        observeChoice(key, (PartitionPlan) value);
      }
      return true;
    }
  }
}

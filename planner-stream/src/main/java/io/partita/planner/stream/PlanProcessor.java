package io.partita.planner.stream;

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
import io.partita.planner.plan.HostStates;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.MappingPlans;
import io.partita.planner.plan.MeasurementAsks;
import io.partita.planner.plan.PartitionPlans;
import io.partita.planner.plan.PlanInputs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.plan.Plans;
import io.partita.planner.plan.RoutePlans;
import io.partita.planner.plan.ServedGroupings;
import io.partita.planner.plan.VersionPlans;
import io.partita.planning.TimingObservation;
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
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
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
 * punctuation, so a burst of timing events costs one planning pass), by calling the plan-table classes ({@link VersionPlans}, {@link MappingPlans}, {@link PartitionPlans}, {@link AssignmentPlans}, {@link RoutePlans}).
 * Each plan record is compared byte for byte with the last one emitted for its key (kept in
 * {@code plans-store}) and forwarded only when it differs; a key that no longer has a plan gets a
 * tombstone. Order of a pass: versions, mappings, partitions, assignments, routes; each stage
 * re-plans only the keys its inputs or the earlier stages changed.
 */
final class PlanProcessor implements Processor<String, byte[], String, byte[]> {
  private static final Logger log = LoggerFactory.getLogger(PlanProcessor.class);
  private static final StringSerializer KEYS = new StringSerializer();

  private final PlanSettings settings;
  private final Duration debounce;
  private final Codecs codecs;
  private final PlannerMetrics metrics;
  private final Map<Class<?>, RecordCodec<?>> codecCache = new HashMap<>();
  private ProcessorContext<String, byte[]> context;
  private KeyValueStore<String, byte[]> dirty;
  private KeyValueStore<String, byte[]> plans;
  private final Map<InputKind, KeyValueStore<String, byte[]>> inputs = new TreeMap<>();
  private KeyValueStore<String, byte[]> groupings;
  private KeyValueStore<String, byte[]> asks;
  private KeyValueStore<String, byte[]> asked;

  PlanProcessor(PlanSettings settings, Codecs codecs, Duration debounce, PlannerMetrics metrics) {
    this.settings = settings;
    this.metrics = metrics;
    this.codecs = codecs;
    this.debounce = debounce;
  }

  @Override
  public void init(ProcessorContext<String, byte[]> context) {
    this.context = context;
    dirty = context.getStateStore(PlannerTopologyNames.DIRTY_STORE);
    plans = context.getStateStore(PlannerTopologyNames.PLANS_STORE);
    for (InputKind kind : InputKind.values()) {
      inputs.put(kind, context.getStateStore(kind.store()));
    }
    groupings = context.getStateStore(InputKind.GROUPING_TIMINGS_STORE);
    asks = context.getStateStore(PlannerTopologyNames.ASKS_STORE);
    asked = context.getStateStore(PlannerTopologyNames.ASKED_STORE);
    context.schedule(debounce, PunctuationType.WALL_CLOCK_TIME, this::planStale);
  }

  @Override
  public void process(Record<String, byte[]> record) {
    // Nothing is forwarded here: the fold processors only mark scopes in dirty-keys-store.
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
      PlanInputs in = loadInputs();
      Pass pass = new Pass(in, stale);
      metrics.pass().record(pass::run);
      log.debug("Planned {} stale scopes: {} plan records changed", stale.size(), pass.changed);
      if (settings.measure().enabled()) {
        askHosts.addAll(pass.partitionHosts);
      }
    }
    if (!askHosts.isEmpty()) {
      ask(askHosts, now);
    }
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
    SortedMap<String, PartitionPlan> live = current(PlanTable.PARTITIONS, PartitionPlan.class);
    for (String host : hosts) {
      for (String pool : Plans.POOLS) {
        List<PartitionPlan> plans = new ArrayList<>();
        live.values().forEach(p -> {
          if (p.getHost().equals(host) && p.getPool().equals(pool)) {
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

  private PlanInputs loadInputs() {
    return new PlanInputs(
        load(InputKind.CATALOG_MODELS, inputs.get(InputKind.CATALOG_MODELS), ModelVersion.class),
        load(InputKind.CATALOG_SERVICES, inputs.get(InputKind.CATALOG_SERVICES), ServiceModel.class),
        HostStates.planned(load(InputKind.HOST_ENVIRONMENTS, inputs.get(InputKind.HOST_ENVIRONMENTS), HostEnvironment.class),
            load(InputKind.HOST_LIVENESS, inputs.get(InputKind.HOST_LIVENESS), HostLiveness.class)),
        load(InputKind.SLOT_STATUS, inputs.get(InputKind.SLOT_STATUS), SlotStatus.class),
        load(InputKind.DEMAND, inputs.get(InputKind.DEMAND), Demand.class),
        load(InputKind.TIMINGS, inputs.get(InputKind.TIMINGS), TimingEvent.class),
        load(InputKind.TIMINGS, groupings, TimingEvent.class));
  }

  /** A store of input records, decoded as records of the topic they were read from. */
  private <T extends SpecificRecord> SortedMap<String, T> load(InputKind kind, KeyValueStore<String, byte[]> store,
      Class<T> type) {
    String topic = kind.topic(settings.topics());
    RecordCodec<T> codec = codec(type);
    SortedMap<String, T> out = new TreeMap<>();
    try (KeyValueIterator<String, byte[]> it = store.all()) {
      it.forEachRemaining(kv -> out.put(kv.key, codec.decode(topic, kv.value)));
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> RecordCodec<T> codec(Class<T> type) {
    return (RecordCodec<T>) codecCache.computeIfAbsent(type, t -> codecs.codec(type));
  }

  /** The live plan records of one table, decoded, by key. */
  private <T extends SpecificRecord> SortedMap<String, T> current(PlanTable table, Class<T> type) {
    Topic<T> topic = table.topic(settings.topics(), codecs, type);
    SortedMap<String, T> out = new TreeMap<>();
    try (KeyValueIterator<String, byte[]> it = plans.prefixScan(table.storePrefix(), KEYS)) {
      it.forEachRemaining(kv -> out.put(kv.key.substring(table.storePrefix().length()), topic.decode(kv.value)));
    }
    return out;
  }

  private final class Pass {
    private final PlanInputs in;
    private final Set<String> versionModels = new TreeSet<>();
    private final Set<String> partitionHosts = new TreeSet<>();
    private final Set<String> partitionModels = new TreeSet<>();
    private final Set<String> servingHosts = new TreeSet<>();
    private boolean allVersions;
    private boolean mapping;
    private boolean assignments;
    private boolean routes;
    int changed;

    Pass(PlanInputs in, Set<String> stale) {
      this.in = in;
      for (String scope : stale) {
        if (scope.equals(Scopes.VERSIONS_ALL)) {
          allVersions = true;
        } else if (scope.startsWith(Scopes.VERSIONS_MODEL)) {
          versionModels.add(scope.substring(Scopes.VERSIONS_MODEL.length()));
        } else if (scope.startsWith(Scopes.PARTITIONS_HOST)) {
          partitionHosts.add(scope.substring(Scopes.PARTITIONS_HOST.length()));
        } else if (scope.startsWith(Scopes.PARTITIONS_MODEL)) {
          partitionModels.add(scope.substring(Scopes.PARTITIONS_MODEL.length()));
        } else if (scope.startsWith(Scopes.SERVING_HOST)) {
          servingHosts.add(scope.substring(Scopes.SERVING_HOST.length()));
        } else if (scope.equals(Scopes.MAPPING)) {
          mapping = true;
        } else if (scope.equals(Scopes.ASSIGNMENTS)) {
          assignments = true;
        } else if (scope.equals(Scopes.ROUTES)) {
          routes = true;
        }
      }
    }

    void run() {
      planVersions();
      Map<String, String> chosen = chosenVersions();
      if (mapping) {
        planMappings(chosen);
      }
      planPartitions(chosen);
      recordServing();
      if (assignments) {
        planAssignments();
      }
      if (routes) {
        emitAll(PlanTable.ROUTES, RoutePlans.routes(in, settings, current(PlanTable.ASSIGNMENTS, SlotAssignment.class).values()));
      }
    }

    private void planVersions() {
      SortedMap<String, VersionChoice> live = current(PlanTable.VERSIONS, VersionChoice.class);
      Set<String> models = new TreeSet<>(versionModels);
      if (allVersions) {
        models.addAll(Plans.catalogModels(in).keySet());
        live.values().forEach(v -> models.add(v.getModel()));
      }
      for (String model : models) {
        List<TimingObservation> observations = VersionPlans.observations(in, model);
        Set<String> hosts = new TreeSet<>(in.hosts().keySet());
        live.values().stream().filter(v -> v.getModel().equals(model)).forEach(v -> hosts.add(v.getHost()));
        for (String host : hosts) {
          VersionChoice running = live.get(Keys.modelHost(model, host));
          if (emit(PlanTable.VERSIONS, Keys.modelHost(model, host), VersionPlans.versionChoice(in, model, host,
              running == null ? null : running.getChosenVersion(), settings.hysteresis(), observations))) {
            partitionHosts.add(host);
            mapping = true;
          }
        }
      }
    }

    /** model/host -> the chosen version, from the live version table. */
    private Map<String, String> chosenVersions() {
      Map<String, String> chosen = new TreeMap<>();
      current(PlanTable.VERSIONS, VersionChoice.class).forEach((key, v) -> {
        if (v.getChosenVersion() != null) {
          chosen.put(key, v.getChosenVersion());
        }
      });
      return chosen;
    }

    private void planMappings(Map<String, String> chosen) {
      SortedMap<String, Set<String>> before = MappingPlans.kinds(current(PlanTable.MAPPINGS, ServiceMapping.class).values());
      emitAll(PlanTable.MAPPINGS, MappingPlans.mappings(in, settings, chosen));
      SortedMap<String, Set<String>> after = MappingPlans.kinds(current(PlanTable.MAPPINGS, ServiceMapping.class).values());
      Set<String> models = new TreeSet<>(before.keySet());
      models.addAll(after.keySet());
      for (String model : models) {
        if (!Objects.equals(before.get(model), after.get(model))) {
          partitionModels.add(model);
        }
      }
    }

    private void planPartitions(Map<String, String> chosen) {
      SortedMap<String, PartitionPlan> live = current(PlanTable.PARTITIONS, PartitionPlan.class);
      if (!partitionModels.isEmpty()) {
        // A model nobody measured yet gets a default partition on every host (PartitionPlans.partitions).
        partitionHosts.addAll(in.hosts().keySet());
      }
      for (String model : partitionModels) {
        String prefix = model + Keys.SEP;
        in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values().forEach(e -> partitionHosts.add(e.getHost()));
        live.values().stream().filter(p -> p.getModel().equals(model)).forEach(p -> partitionHosts.add(p.getHost()));
      }
      if (partitionHosts.isEmpty()) {
        return;
      }
      // A plan predicted from another host follows that host's timings, and a more similar host
      // that measures: its hosts are re-planned with every pass that re-plans partitions (they are
      // few, and only until their own timings arrive).
      live.values().stream().filter(p -> p.getPredictedFrom() != null).forEach(p -> partitionHosts.add(p.getHost()));
      SortedMap<String, Set<String>> kinds = MappingPlans.kinds(current(PlanTable.MAPPINGS, ServiceMapping.class).values());
      for (String host : partitionHosts) {
        Map<String, String> chosenOnHost = new TreeMap<>();
        chosen.forEach((key, version) -> {
          int cut = key.indexOf(Keys.SEP);
          if (key.substring(cut + 1).equals(host)) {
            chosenOnHost.put(key.substring(0, cut), version);
          }
        });
        SortedMap<String, PartitionPlan> planned = PartitionPlans.partitions(in, settings, host, chosenOnHost, kinds, live);
        List<String> gone = new ArrayList<>();
        live.forEach((key, p) -> {
          if (p.getHost().equals(host) && !planned.containsKey(key)) {
            gone.add(key);
          }
        });
        for (Map.Entry<String, PartitionPlan> e : planned.entrySet()) {
          assignments |= emit(PlanTable.PARTITIONS, e.getKey(), e.getValue());
        }
        for (String key : gone) {
          assignments |= emit(PlanTable.PARTITIONS, key, null);
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
      SortedMap<String, PartitionPlan> live = current(PlanTable.PARTITIONS, PartitionPlan.class);
      SortedMap<String, SlotAssignment> slots = current(PlanTable.ASSIGNMENTS, SlotAssignment.class);
      Topic<TimingEvent> timings = settings.topics().profileTimings(codecs);
      for (String host : servingHosts) {
        for (TimingEvent e : ServedGroupings.measurements(in, settings, host, live.values(), slots.values())) {
          context.forward(new Record<>(Keys.grouping(e), timings.encode(e), Math.max(0, context.currentStreamTimeMs())),
              PlannerTopologyNames.SERVING_TIMINGS_SINK);
          metrics.servingMeasurement();
          log.debug("Serving on {}/{} measured {}/{} {} at {}/s ({} runs)", e.getHost(), e.getPool(), e.getModel(),
              e.getVersion(), e.getGrouping(), e.getThroughput(), e.getSamples());
        }
      }
    }

    private void planAssignments() {
      SortedMap<String, SlotAssignment> planned =
          AssignmentPlans.assignments(in, settings, current(PlanTable.PARTITIONS, PartitionPlan.class).values());
      planned = AssignmentPlans.keepCapacities(planned, current(PlanTable.ASSIGNMENTS, SlotAssignment.class),
          settings.hysteresis());
      routes |= emitAll(PlanTable.ASSIGNMENTS, planned);
    }

    /** Emits every planned record and a tombstone for every live key of the table not planned now. */
    private <T extends SpecificRecord> boolean emitAll(PlanTable table, SortedMap<String, T> planned) {
      boolean any = false;
      List<String> gone = new ArrayList<>();
      try (KeyValueIterator<String, byte[]> it = plans.prefixScan(table.storePrefix(), KEYS)) {
        while (it.hasNext()) {
          KeyValue<String, byte[]> kv = it.next();
          String key = kv.key.substring(table.storePrefix().length());
          if (!planned.containsKey(key)) {
            gone.add(key);
          }
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
      String storeKey = table.storeKey(key);
      byte[] old = plans.get(storeKey);
      byte[] bytes = value == null ? null : ((Topic) table.topic(settings.topics(), codecs)).encode(value);
      if (bytes == null ? old == null : old != null && Arrays.equals(old, bytes)) {
        return false;
      }
      if (bytes == null) {
        plans.delete(storeKey);
      } else {
        plans.put(storeKey, bytes);
      }
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

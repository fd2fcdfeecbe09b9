package io.partita.planner.stream;

import io.partita.avro.DeadLetter;
import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.common.kafka.DeadLetters;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.AskState;
import io.partita.planner.plan.AskedGrouping;
import io.partita.planner.plan.HostStates;
import io.partita.planner.plan.InputTables;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.MeasurementAsks;
import io.partita.planner.plan.Plans;
import io.partita.planning.version.VersionObjective;
import io.partita.schemas.DecodeException;
import java.util.Locale;
import org.apache.avro.AvroRuntimeException;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Decodes one input topic's records, checks that they make sense, folds them into the input's
 * store and marks what they make stale in {@code dirty-keys-store}. A record that cannot be
 * decoded or makes no sense (negative time, unknown model, ...) goes to the dead letters with the
 * reason and where it came from; the planner keeps running. Table inputs take a null value as a
 * deletion of the key. Every store write is also forwarded, decoded, to the planning processor,
 * which keeps the tables decoded and indexed ({@link io.partita.planner.plan.InputTables}).
 */
final class FoldProcessor implements Processor<String, byte[], String, Object> {
  /** {@code TimingEvent.condition} of a measurement made while serving slots stayed busy (the profiler's MeasuringCondition). */
  static final String BUSY_AFTER_WAIT = "BUSY_AFTER_WAIT";

  static final String COMPONENT = "planner";
  private static final byte[] MARK = new byte[0];

  private final InputKind kind;
  private final RecordCodec<TimingEvent> timings;
  private final RecordCodec<ModelVersion> models;
  private final RecordCodec<ServiceModel> services;
  private final RecordCodec<HostEnvironment> environments;
  private final RecordCodec<SlotStatus> statuses;
  private final RecordCodec<HostLiveness> liveness;
  private final RecordCodec<Demand> demands;
  private final RecordCodec<DeadLetter> deadLetters;
  private final String deadLetterTopic;
  private final PlannerMetrics metrics;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, byte[]> store;
  private KeyValueStore<String, byte[]> groupings;
  private KeyValueStore<String, byte[]> catalogServices;
  private KeyValueStore<String, byte[]> dirty;
  private KeyValueStore<String, byte[]> asks;
  private KeyValueStore<String, byte[]> asked;
  private String topic;

  FoldProcessor(InputKind kind, Codecs codecs, String deadLetterTopic, PlannerMetrics metrics) {
    this.kind = kind;
    this.metrics = metrics;
    this.deadLetterTopic = deadLetterTopic;
    timings = codecs.codec(TimingEvent.class);
    models = codecs.codec(ModelVersion.class);
    services = codecs.codec(ServiceModel.class);
    environments = codecs.codec(HostEnvironment.class);
    statuses = codecs.codec(SlotStatus.class);
    liveness = codecs.codec(HostLiveness.class);
    demands = codecs.codec(Demand.class);
    deadLetters = codecs.codec(DeadLetter.class);
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    store = context.getStateStore(kind.store());
    catalogServices = context.getStateStore(InputKind.CATALOG_SERVICES.store());
    dirty = context.getStateStore(PlannerTopologyNames.DIRTY_STORE);
    if (kind == InputKind.TIMINGS) {
      groupings = context.getStateStore(InputKind.GROUPING_TIMINGS_STORE);
      asks = context.getStateStore(PlannerTopologyNames.ASKS_STORE);
      asked = context.getStateStore(PlannerTopologyNames.ASKED_STORE);
    }
  }

  @Override
  public void process(Record<String, byte[]> record) {
    topic = context.recordMetadata().map(RecordMetadata::topic).orElse(kind.name());
    try {
      switch (kind) {
        case TIMINGS -> foldTiming(record);
        case CATALOG_MODELS -> storeModel(record);
        case CATALOG_SERVICES -> storeService(record);
        case HOST_ENVIRONMENTS -> storeEnvironment(record);
        case HOST_LIVENESS -> storeLiveness(record);
        case SLOT_STATUS -> storeStatus(record);
        case DEMAND -> storeDemand(record);
        default -> throw new IllegalStateException("no fold for " + kind);
      }
    } catch (Rejected | DecodeException e) {
      deadLetter(record, e);
    } catch (AvroRuntimeException e) {
      deadLetter(record, e);
    }
  }

  private void foldTiming(Record<String, byte[]> record) {
    if (record.value() == null) {
      throw new Rejected("value: null; timing events are never deleted");
    }
    TimingEvent e = timings.decode(topic, record.value());
    checkId("model", e.getModel());
    checkId("version", e.getVersion());
    checkId("host", e.getHost());
    if (!Plans.POOLS.contains(e.getPool())) {
      throw new Rejected("pool: '" + e.getPool() + "' is not one of " + Plans.POOLS);
    }
    checkId("provider", e.getProvider());
    if (e.getSize() <= 0) {
      throw new Rejected("size: must be > 0, was " + e.getSize());
    }
    if (e.getBatch() <= 0) {
      throw new Rejected("batch: must be > 0, was " + e.getBatch());
    }
    if (!e.getGrouping().isEmpty() && !e.getOk()) {
      answer(e); // a failed grouping (NaN times, dead-lettered below) still answers the planner's request
    }
    checkTime("p50Ms", e.getP50Ms());
    checkTime("p90Ms", e.getP90Ms());
    checkTime("p99Ms", e.getP99Ms());
    checkTime("meanMs", e.getMeanMs());
    if (!(e.getThroughput() >= 0) || Double.isInfinite(e.getThroughput())) {
      throw new Rejected("throughput: must be a finite number >= 0, was " + e.getThroughput());
    }
    if (e.getMemoryBytes() < 0) {
      throw new Rejected("memoryBytes: must be >= 0, was " + e.getMemoryBytes());
    }
    for (int size : e.getGrouping()) {
      if (size <= 0) {
        throw new Rejected("grouping: every partition size must be > 0, got " + e.getGrouping());
      }
    }
    // A timing of a model version the catalog does not name (yet) is kept, not refused: a profiler
    // that starts beside the planner measures before the planner's catalog record lands (seen on a
    // cluster of processes), and a refused timing was never measured again. The planner plans only
    // what the catalog names, so such a timing waits in the store until its model version arrives.
    if (!e.getGrouping().isEmpty()) {
      answer(e);
      if (BUSY_AFTER_WAIT.equals(e.getCondition())) {
        askSoonerAfterBusy(e);
      }
    }
    if (!e.getOk() || (!e.getStable() && e.getGrouping().isEmpty())) {
      // A failed measurement, or a single point whose median did not settle, is kept on the topic
      // but never planned with. A grouping-mode measurement is planned with by its throughput over
      // the whole window, which holds when the per-run median wanders (a host under a CPU quota,
      // partitions running side by side): dropping it left a host predicted for the hour before
      // the planner asked again.
      return;
    }
    if (!e.getGrouping().isEmpty() && BUSY_AFTER_WAIT.equals(e.getCondition())) {
      // Serving traffic shared the cores with the grouping (the profiler's wait for idle slots ran
      // out): its throughput mixes the grouping with the traffic in an unknown proportion, a lower
      // bound of unknown slack, and weighting it in would bias the plan against whichever grouping
      // happened to be measured under load. It answered the request above and is not planned with;
      // the grouping may be asked for again sooner (askSoonerAfterBusy), and a running grouping is
      // measured from serving meanwhile.
      return;
    }
    if (!(e.getP50Ms() > 0)) {
      throw new Rejected("p50Ms: a successful measurement needs a time > 0, was " + e.getP50Ms());
    }
    boolean grouping = !e.getGrouping().isEmpty();
    KeyValueStore<String, byte[]> target = grouping ? groupings : store;
    // A grouping's figure from serving is kept beside the profiler's (idle) one, not over it: their
    // ratio is what serving costs on the pool, by which idle figures are compared with served ones.
    String key = grouping ? Keys.groupingRecord(e) : Keys.timing(e);
    byte[] old = target.get(key);
    if (old != null && timings.decode(topic, old).getTimestamp() > e.getTimestamp()) {
      return; // an older measurement arriving late does not replace a newer one
    }
    target.put(key, record.value());
    changed(grouping ? InputTables.Table.GROUPINGS : InputTables.Table.TIMINGS, key, e, record.timestamp());
    if (grouping) {
      asked.delete(Keys.grouping(e)); // measured: the planner never needs to ask for it again
    }
    mark(Scopes.PARTITIONS_HOST + e.getHost());
    if (!grouping) {
      mark(Scopes.VERSIONS_AT + Keys.modelHost(e.getModel(), e.getHost()));
      mark(Scopes.MAPPING);
    }
  }

  /**
   * A grouping measured beside serving traffic is asked for again after planner.measure.busy.retry.ms
   * instead of planner.measure.retry.ms (the hour meant for a grouping that failed or would not
   * settle): the traffic that spoiled it comes and goes.
   */
  private void askSoonerAfterBusy(TimingEvent e) {
    String key = Keys.grouping(e);
    AskedGrouping at = AskedGrouping.decode(asked.get(key));
    if (at != null && !at.busy()) {
      asked.put(key, at.answeredBusy().encode());
    }
  }

  /**
   * A grouping-mode event answering the planner's outstanding request of its host and pool: the
   * request waits for one grouping less, and the host is re-planned so that the planner can use
   * the measurement and ask for the next one.
   */
  private void answer(TimingEvent e) {
    if (e.getRequestId() == null || !e.getRequestId().startsWith(MeasurementAsks.REQUEST_PREFIX)) {
      return;
    }
    String hostPool = Keys.hostPool(e.getHost(), e.getPool());
    AskState state = AskState.decode(asks.get(hostPool));
    if (state == null) {
      return;
    }
    AskState after = state.answered(e.getRequestId(), Keys.grouping(e));
    if (after != state) {
      metrics.answered();
      asks.put(hostPool, after.encode());
      mark(Scopes.PARTITIONS_HOST + e.getHost());
    }
  }

  private void storeModel(Record<String, byte[]> record) {
    String key = requireKey(record);
    byte[] old = store.get(key);
    if (record.value() == null) {
      if (old != null) {
        store.delete(key);
        changed(InputTables.Table.VERSIONS, key, null, record.timestamp());
        touchModel(models.decode(topic, old).getModel());
      }
      return;
    }
    ModelVersion v = models.decode(topic, record.value());
    checkId("model", v.getModel());
    checkId("version", v.getVersion());
    expectKey(key, Keys.modelVersion(v.getModel(), v.getVersion()));
    store.put(key, record.value());
    changed(InputTables.Table.VERSIONS, key, v, record.timestamp());
    touchModel(v.getModel());
  }

  private void touchModel(String model) {
    mark(Scopes.VERSIONS_MODEL + model);
    mark(Scopes.PARTITIONS_MODEL + model);
    mark(Scopes.MAPPING);
  }

  private void storeService(Record<String, byte[]> record) {
    String key = requireKey(record);
    byte[] old = store.get(key);
    if (old != null) {
      touchServiceModel(key, services.decode(topic, old).getBaseModel());
    }
    if (record.value() == null) {
      store.delete(key);
      changed(InputTables.Table.SERVICE_MODELS, key, null, record.timestamp());
      return;
    }
    ServiceModel sm = services.decode(topic, record.value());
    checkId("name", sm.getName());
    checkId("baseModel", sm.getBaseModel());
    expectKey(key, sm.getName());
    if (sm.getInstances() < 0) {
      throw new Rejected("instances: must be >= 0, was " + sm.getInstances());
    }
    if (sm.getWeightFile() != null && sm.getWeightFile().getSha256().isBlank()) {
      throw new Rejected("weightFile.sha256: must not be blank");
    }
    if (sm.getWeightFile() != null && sm.getWeightFile().getSizeBytes() < 0) {
      throw new Rejected("weightFile.sizeBytes: must be >= 0, was " + sm.getWeightFile().getSizeBytes());
    }
    if (VersionObjective.parse(sm.getVersionObjective()).isEmpty()) {
      throw new Rejected("versionObjective: '" + sm.getVersionObjective() + "' is not one of "
          + VersionObjective.choices());
    }
    store.put(key, record.value());
    changed(InputTables.Table.SERVICE_MODELS, key, sm, record.timestamp());
    touchServiceModel(key, sm.getBaseModel());
  }

  private void touchServiceModel(String name, String baseModel) {
    mark(Scopes.VERSIONS_MODEL + baseModel);
    mark(Scopes.PARTITIONS_MODEL + baseModel);
    mark(Scopes.MAPPING);
    mark(Scopes.ASSIGNMENTS_MODEL + baseModel);
    mark(Scopes.ROUTES_SERVICE + name);
  }

  private void storeEnvironment(Record<String, byte[]> record) {
    String key = requireKey(record);
    if (record.value() == null) {
      if (store.get(key) != null) {
        store.delete(key);
        changed(InputTables.Table.HOSTS, key, null, record.timestamp());
        touchHost(key);
      }
      return;
    }
    HostEnvironment env = environments.decode(topic, record.value());
    checkId("hostId", env.getHostId());
    expectKey(key, env.getHostId());
    if (env.getUsableCores() < 0 || env.getLogicalCores() < 0) {
      throw new Rejected("usableCores: must be >= 0, was " + env.getUsableCores());
    }
    if (env.getMemoryBytes() < 0) {
      throw new Rejected("memoryBytes: must be >= 0, was " + env.getMemoryBytes());
    }
    store.put(key, record.value());
    changed(InputTables.Table.HOSTS, key, env, record.timestamp());
    touchHost(key);
  }

  private void storeLiveness(Record<String, byte[]> record) {
    String key = requireKey(record);
    if (record.value() == null) {
      if (store.get(key) != null) {
        store.delete(key);
        changed(InputTables.Table.LIVENESS, key, null, record.timestamp());
        touchHost(key);
      }
      return;
    }
    HostLiveness l = liveness.decode(topic, record.value());
    checkId("host", l.getHost());
    expectKey(key, l.getHost());
    if (!HostStates.KNOWN.contains(l.getState())) {
      throw new Rejected("state: '" + l.getState() + "' is not one of " + HostStates.KNOWN);
    }
    byte[] old = store.get(key);
    store.put(key, record.value());
    changed(InputTables.Table.LIVENESS, key, l, record.timestamp());
    if (old == null || !liveness.decode(topic, old).getState().equals(l.getState())) {
      touchHost(key);
    }
  }

  private void touchHost(String host) {
    mark(Scopes.VERSIONS_HOST + host);
    mark(Scopes.PARTITIONS_HOST + host);
    mark(Scopes.MAPPING);
    mark(Scopes.ASSIGNMENTS_HOST + host);
  }

  private void storeStatus(Record<String, byte[]> record) {
    String key = requireKey(record);
    if (record.value() == null) {
      byte[] old = store.get(key);
      store.delete(key);
      changed(InputTables.Table.SLOTS, key, null, record.timestamp());
      if (old != null) {
        mark(Scopes.ROUTES_HOST + statuses.decode(topic, old).getHost());
      }
      return;
    }
    SlotStatus status = statuses.decode(topic, record.value());
    checkId("host", status.getHost());
    checkId("slot", status.getSlot());
    expectKey(key, Keys.hostSlot(status.getHost(), status.getSlot()));
    ServingEvidence evidence = status.getServing();
    if (evidence != null && (evidence.getItems() < 0 || evidence.getBatches() < 0 || evidence.getBusyNanos() < 0
        || evidence.getWindowMs() < 0 || (evidence.getItemOverheadNanos() != null && evidence.getItemOverheadNanos() < 0))) {
      throw new Rejected("serving: items, batches, busyNanos, windowMs and itemOverheadNanos must be >= 0, got " + evidence);
    }
    byte[] old = store.get(key);
    store.put(key, record.value());
    changed(InputTables.Table.SLOTS, key, status, record.timestamp());
    mark(Scopes.ROUTES_HOST + status.getHost());
    // Serving evidence may measure the host's running groupings and re-weigh its slots' capacity;
    // a slot that stopped serving (its last window had runs, this one none) gives its capacity back,
    // and one whose worker's cost per item moved (its CPU budget changed while it served nothing,
    // its share taken away) is re-weighed by it.
    ServingEvidence before = old == null ? null : statuses.decode(topic, old).getServing();
    if (ran(evidence) || ran(before) || overheadMoved(before, evidence)) {
      mark(Scopes.SERVING_HOST + status.getHost());
      mark(Scopes.ASSIGNMENTS_HOST + status.getHost());
    } else if (evidence != null) {
      // A window with no runs after another: nothing to re-weigh, but a serving figure the host's
      // share was cut by comes back only through such windows (ServedGroupings, ServingRate.recover).
      mark(Scopes.SERVING_HOST + status.getHost());
    }
  }

  private static boolean ran(ServingEvidence evidence) {
    return evidence != null && evidence.getBatches() > 0;
  }

  /** Whether the worker's cost per item beyond the run came, went or moved by more than a tenth. */
  private static boolean overheadMoved(ServingEvidence before, ServingEvidence now) {
    Long was = before == null ? null : before.getItemOverheadNanos();
    Long is = now == null ? null : now.getItemOverheadNanos();
    if (was == null || is == null) {
      return was != is;
    }
    return Math.abs(is - was) > 0.1 * Math.max(is, was);
  }

  private void storeDemand(Record<String, byte[]> record) {
    String key = requireKey(record);
    byte[] sm = catalogServices.get(key);
    if (record.value() == null) {
      store.delete(key);
      changed(InputTables.Table.DEMAND, key, null, record.timestamp());
    } else {
      Demand d = demands.decode(topic, record.value());
      checkId("serviceModel", d.getServiceModel());
      expectKey(key, d.getServiceModel());
      if (!(d.getRequestsPerSecond() >= 0) || Double.isInfinite(d.getRequestsPerSecond())) {
        throw new Rejected("requestsPerSecond: must be a finite number >= 0, was " + d.getRequestsPerSecond());
      }
      store.put(key, record.value());
      changed(InputTables.Table.DEMAND, key, d, record.timestamp());
    }
    if (sm != null) {
      mark(Scopes.PARTITIONS_MODEL + services.decode(topic, sm).getBaseModel());
    }
    mark(Scopes.MAPPING);
  }

  /** Hands a store write, decoded, to the planning processor's tables. */
  private void changed(InputTables.Table table, String key, Object value, long timestamp) {
    context.forward(new Record<>(key, new InputChange(table, key, value), timestamp), PlannerTopologyNames.PLAN_PROCESSOR);
  }

  private void mark(String scope) {
    dirty.put(scope, MARK);
  }

  private static String requireKey(Record<String, byte[]> record) {
    if (record.key() == null || record.key().isBlank()) {
      throw new Rejected("key: missing; table records are keyed by their id");
    }
    return record.key();
  }

  private static void expectKey(String key, String expected) {
    if (!key.equals(expected)) {
      throw new Rejected("key: '" + key + "' does not match the record, which says '" + expected + "'");
    }
  }

  private static void checkId(String field, String value) {
    if (value == null || value.isBlank()) {
      throw new Rejected(field + ": must not be blank");
    }
    if (value.contains(Keys.SEP)) {
      throw new Rejected(field + ": '" + value + "' must not contain '" + Keys.SEP + "' (it separates key parts)");
    }
  }

  private static void checkTime(String field, double value) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      throw new Rejected(field + ": must be a finite number, was " + value);
    }
    if (value < 0) {
      throw new Rejected(field + ": negative time " + value + " ms");
    }
  }

  private void deadLetter(Record<String, byte[]> record, Exception error) {
    metrics.deadLetter(kind.name().toLowerCase(Locale.ROOT));
    RecordMetadata meta = context.recordMetadata().orElse(null);
    DeadLetters.Source source = new DeadLetters.Source(topic, meta == null ? -1 : meta.partition(),
        meta == null ? -1 : meta.offset(), record.key(), record.value(), record.headers());
    DeadLetter letter = DeadLetters.of(source, error, COMPONENT, record.timestamp());
    context.forward(new Record<>(record.key(), deadLetters.encode(deadLetterTopic, letter), record.timestamp()),
        PlannerTopologyNames.DEAD_LETTER_SINK);
  }
}

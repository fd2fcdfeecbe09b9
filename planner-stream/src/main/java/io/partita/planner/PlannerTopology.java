package io.partita.planner;

import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.stream.InputKind;
import io.partita.planner.stream.PlanTable;
import io.partita.planner.stream.PlannerTopologyNames;
import io.partita.planner.stream.Processors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The planner's Kafka Streams topology, built by the one method that {@link PlannerService}, the
 * replay and the tests all call.
 *
 * <pre>
 * read-timings            -> fold-timings            -+  timings-store, grouping-timings-store
 * read-catalog-models     -> store-catalog-models    -+  catalog-models-store
 * read-catalog-services   -> store-catalog-services  -+  catalog-services-store
 * read-host-environments  -> store-host-environments -+  host-environments-store      every fold marks
 * read-slot-status        -> store-slot-status       -+  slot-status-store            dirty-keys-store;
 * read-demand             -> store-demand            -+  demand-store                 poison -> write-dead-letters
 *                                                      |
 *                            plan-changes (wall-clock punctuation every debounce interval, plans-store)
 *                              -> write-plan-versions, write-plan-mappings, write-plan-partitions,
 *                                 write-plan-assignments, write-plan-routes
 *                              -> write-profile-requests (grouping-mode measurements it asks for;
 *                                 measure-asks-store, measure-asked-store, also read by fold-timings)
 *                              -> write-serving-timings (grouping-mode measurements from the slots'
 *                                 serving evidence, to profile.timings: read back by fold-timings)
 * </pre>
 *
 * Every node and store has a fixed name, so adding a step never renames state. Values travel as
 * bytes: the fold processors decode them themselves so that a poison record becomes a dead letter
 * instead of stopping the application. All stores are persistent and logged, so a restarted
 * planner restores them from their changelogs ({@code <application.id>-<store>-changelog}).
 */
public final class PlannerTopology {
  private PlannerTopology() {}

  /**
   * @param codecs how records are encoded on the topics ({@code serde.mode}); plan records are
   *     compared in this encoding
   */
  public static Topology build(PlanSettings settings, Codecs codecs, Duration debounce) {
    return build(settings, codecs, debounce, PlannerMetrics.inMemory());
  }

  /** As above, recording into {@code metrics} (the live planner's registry). */
  public static Topology build(PlanSettings settings, Codecs codecs, Duration debounce, PlannerMetrics metrics) {
    return build(settings, codecs, debounce, metrics, true);
  }

  /**
   * As above; {@code durable = false} keeps every store in memory without a changelog, for a run
   * that is thrown away afterwards ({@code partita replay}): the same plans, without RocksDB writes
   * and changelog records on every input record.
   */
  public static Topology build(PlanSettings settings, Codecs codecs, Duration debounce, PlannerMetrics metrics,
      boolean durable) {
    return build(settings, codecs, debounce, metrics, durable, false);
  }

  /**
   * As above; {@code exhaustive = true} re-plans every key of every plan table in each pass (the
   * whole-problem way) instead of what the changes touched. Both give the same plan; the tests
   * compare them, and a suspected re-planning bug can be checked by replaying with it.
   */
  public static Topology build(PlanSettings settings, Codecs codecs, Duration debounce, PlannerMetrics metrics,
      boolean durable, boolean exhaustive) {
    Topics topics = settings.topics();
    Topology topology = new Topology();
    List<String> folds = new ArrayList<>();
    for (InputKind kind : InputKind.values()) {
      topology.addSource(kind.source(), new StringDeserializer(), new ByteArrayDeserializer(), kind.topic(topics));
      topology.addProcessor(kind.processor(), Processors.fold(kind, codecs, topics.deadLetter(), metrics), kind.source());
      folds.add(kind.processor());
    }
    String[] foldNames = folds.toArray(String[]::new);
    topology.addProcessor(PlannerTopologyNames.PLAN_PROCESSOR, Processors.plan(settings, codecs, debounce, metrics, exhaustive),
        foldNames);
    topology.addSink(PlannerTopologyNames.DEAD_LETTER_SINK, topics.deadLetter(), new StringSerializer(),
        new ByteArraySerializer(), foldNames);
    topology.addSink(PlannerTopologyNames.PROFILE_REQUEST_SINK, topics.profileRequests(), new StringSerializer(),
        new ByteArraySerializer(), PlannerTopologyNames.PLAN_PROCESSOR);
    topology.addSink(PlannerTopologyNames.SERVING_TIMINGS_SINK, topics.profileTimings(), new StringSerializer(),
        new ByteArraySerializer(), PlannerTopologyNames.PLAN_PROCESSOR);
    for (PlanTable table : PlanTable.values()) {
      topology.addSink(table.sink(), table.topic(topics), new StringSerializer(), new ByteArraySerializer(),
          PlannerTopologyNames.PLAN_PROCESSOR);
    }
    List<String> all = new ArrayList<>(folds);
    all.add(PlannerTopologyNames.PLAN_PROCESSOR);
    for (InputKind kind : InputKind.values()) {
      // The catalog stores are read by other folds too (unknown-model check, demand -> base model).
      boolean shared = kind == InputKind.CATALOG_MODELS || kind == InputKind.CATALOG_SERVICES;
      topology.addStateStore(store(kind.store(), durable), shared ? all.toArray(String[]::new)
          : new String[] {kind.processor(), PlannerTopologyNames.PLAN_PROCESSOR});
    }
    topology.addStateStore(store(InputKind.GROUPING_TIMINGS_STORE, durable), InputKind.TIMINGS.processor(),
        PlannerTopologyNames.PLAN_PROCESSOR);
    topology.addStateStore(store(PlannerTopologyNames.DIRTY_STORE, durable), all.toArray(String[]::new));
    topology.addStateStore(store(PlannerTopologyNames.PLANS_STORE, durable), PlannerTopologyNames.PLAN_PROCESSOR);
    topology.addStateStore(store(PlannerTopologyNames.ASKS_STORE, durable), InputKind.TIMINGS.processor(),
        PlannerTopologyNames.PLAN_PROCESSOR);
    topology.addStateStore(store(PlannerTopologyNames.ASKED_STORE, durable), InputKind.TIMINGS.processor(),
        PlannerTopologyNames.PLAN_PROCESSOR);
    return topology;
  }

  private static StoreBuilder<KeyValueStore<String, byte[]>> store(String name, boolean durable) {
    if (!durable) {
      return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), Serdes.ByteArray())
          .withLoggingDisabled();
    }
    return Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.ByteArray());
  }
}

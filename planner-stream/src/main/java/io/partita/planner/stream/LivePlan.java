package io.partita.planner.stream;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.PartitionPlan;
import io.partita.avro.SlotAssignment;
import io.partita.avro.VersionChoice;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.Keys;
import java.util.Collections;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The live plan ({@code plans-store}: the last bytes written per plan key) with the indexes a
 * planning pass looks keys up by, so that re-planning one host reads that host's records and not
 * the whole plan: the chosen version per model and host, the partition keys of each host, the
 * slots of each host, of each base model and of each service model. Records are decoded only
 * when a pass needs them. The indexes are built from the store on the first use after the task
 * starts and kept up to date by {@link #put}, the one way the planner writes the store.
 */
final class LivePlan {
  private static final StringSerializer KEYS = new StringSerializer();

  private final KeyValueStore<String, byte[]> store;
  private final Topics topics;
  private final Codecs codecs;
  private boolean indexed;
  /** model -> host -> chosen version (null: no version qualifies). */
  private final Map<String, TreeMap<String, String>> versionsByModel = new HashMap<>();
  /** host -> model -> chosen version (non-null only). */
  private final Map<String, TreeMap<String, String>> chosenByHost = new HashMap<>();
  private final Map<String, TreeSet<String>> partitionsByHost = new TreeMap<>();
  /**
   * host -> its partition keys whose plan does not rest on the host's own timings: predicted from
   * another host ({@code predictedFrom}) or a default placement ({@code defaultPlan}).
   */
  private final Map<String, TreeSet<String>> provisionalByHost = new TreeMap<>();
  private final Map<String, TreeSet<String>> slotsByHost = new TreeMap<>();
  private final Map<String, TreeSet<String>> slotsByModel = new HashMap<>();
  private final Map<String, TreeSet<String>> slotsByServiceModel = new HashMap<>();
  /** base model -> its slots that hold at least one instance. */
  private final Map<String, TreeSet<String>> occupiedByModel = new HashMap<>();
  /** slot key -> base model it runs. */
  private final Map<String, String> slotModel = new HashMap<>();
  /** slot key -> the instance ids it holds, in order. */
  private final Map<String, List<String>> slotInstances = new HashMap<>();

  LivePlan(KeyValueStore<String, byte[]> store, Topics topics, Codecs codecs) {
    this.store = store;
    this.topics = topics;
    this.codecs = codecs;
  }

  /** Forgets the indexes (the task starts again: the store may have been restored). */
  void reset() {
    indexed = false;
    versionsByModel.clear();
    chosenByHost.clear();
    partitionsByHost.clear();
    provisionalByHost.clear();
    slotsByHost.clear();
    slotsByModel.clear();
    slotsByServiceModel.clear();
    occupiedByModel.clear();
    slotModel.clear();
    slotInstances.clear();
  }

  private void index() {
    if (indexed) {
      return;
    }
    indexed = true;
    for (PlanTable table : new PlanTable[] {PlanTable.VERSIONS, PlanTable.PARTITIONS, PlanTable.ASSIGNMENTS}) {
      try (KeyValueIterator<String, byte[]> it = store.prefixScan(table.storePrefix(), KEYS)) {
        while (it.hasNext()) {
          KeyValue<String, byte[]> kv = it.next();
          String key = kv.key.substring(table.storePrefix().length());
          indexAdd(table, key, decode(table, kv.value));
        }
      }
    }
  }

  byte[] bytes(PlanTable table, String key) {
    return store.get(table.storeKey(key));
  }

  /** The live record of one key, decoded; null when there is none. */
  <T extends SpecificRecord> T get(PlanTable table, String key, Class<T> type) {
    byte[] bytes = bytes(table, key);
    return bytes == null ? null : table.topic(topics, codecs, type).decode(bytes);
  }

  private SpecificRecord decode(PlanTable table, byte[] bytes) {
    return table.topic(topics, codecs).decode(bytes);
  }

  /** All live records of a table, decoded, by key (a small table: mappings). */
  <T extends SpecificRecord> SortedMap<String, T> all(PlanTable table, Class<T> type) {
    Topic<T> topic = table.topic(topics, codecs, type);
    SortedMap<String, T> out = new TreeMap<>();
    try (KeyValueIterator<String, byte[]> it = store.prefixScan(table.storePrefix(), KEYS)) {
      it.forEachRemaining(kv -> out.put(kv.key.substring(table.storePrefix().length()), topic.decode(kv.value)));
    }
    return out;
  }

  /** The keys of a table, in order. */
  SortedSet<String> keys(PlanTable table) {
    SortedSet<String> out = new TreeSet<>();
    try (KeyValueIterator<String, byte[]> it = store.prefixScan(table.storePrefix(), KEYS)) {
      it.forEachRemaining(kv -> out.add(kv.key.substring(table.storePrefix().length())));
    }
    return out;
  }

  /**
   * Writes one record ({@code value} null: removes the key); {@code old} is what the store held.
   */
  void put(PlanTable table, String key, SpecificRecord value, byte[] bytes, byte[] old) {
    index();
    if (table == PlanTable.VERSIONS && old != null && value != null) {
      // The same key with new figures: the index changes only if the chosen version did.
      VersionChoice v = (VersionChoice) value;
      if (Objects.equals(chosen(v.getModel(), v.getHost()), v.getChosenVersion())) {
        store.put(table.storeKey(key), bytes);
        return;
      }
    }
    if (old != null) {
      indexRemove(table, key, table == PlanTable.ASSIGNMENTS ? decode(table, old) : null);
    }
    if (bytes == null) {
      store.delete(table.storeKey(key));
    } else {
      store.put(table.storeKey(key), bytes);
      indexAdd(table, key, value);
    }
  }

  private void indexAdd(PlanTable table, String key, SpecificRecord value) {
    switch (table) {
      case VERSIONS -> {
        VersionChoice v = (VersionChoice) value;
        versionsByModel.computeIfAbsent(v.getModel(), m -> new TreeMap<>()).put(v.getHost(), v.getChosenVersion());
        if (v.getChosenVersion() != null) {
          chosenByHost.computeIfAbsent(v.getHost(), h -> new TreeMap<>()).put(v.getModel(), v.getChosenVersion());
        }
      }
      case PARTITIONS -> {
        partitionsByHost.computeIfAbsent(partitionHost(key), h -> new TreeSet<>()).add(key);
        PartitionPlan plan = (PartitionPlan) value;
        if (plan.getPredictedFrom() != null || plan.getDefaultPlan()) {
          provisionalByHost.computeIfAbsent(partitionHost(key), h -> new TreeSet<>()).add(key);
        }
      }
      case ASSIGNMENTS -> {
        SlotAssignment a = (SlotAssignment) value;
        slotsByHost.computeIfAbsent(a.getHost(), h -> new TreeSet<>()).add(key);
        slotsByModel.computeIfAbsent(a.getModel(), m -> new TreeSet<>()).add(key);
        slotModel.put(key, a.getModel());
        List<String> ids = new ArrayList<>();
        for (AssignedServiceModel asm : a.getServiceModels()) {
          slotsByServiceModel.computeIfAbsent(asm.getServiceModel(), s -> new TreeSet<>()).add(key);
          ids.add(asm.getInstanceId());
        }
        slotInstances.put(key, List.copyOf(ids));
        if (!ids.isEmpty()) {
          occupiedByModel.computeIfAbsent(a.getModel(), m -> new TreeSet<>()).add(key);
        }
      }
      default -> { }
    }
  }

  private void indexRemove(PlanTable table, String key, SpecificRecord old) {
    switch (table) {
      case VERSIONS -> {
        int cut = key.indexOf(Keys.SEP);
        String model = key.substring(0, cut);
        String host = key.substring(cut + 1);
        removeFrom(versionsByModel, model, host);
        removeFrom(chosenByHost, host, model);
      }
      case PARTITIONS -> {
        removeFrom(partitionsByHost, partitionHost(key), key);
        removeFrom(provisionalByHost, partitionHost(key), key);
      }
      case ASSIGNMENTS -> {
        SlotAssignment a = (SlotAssignment) old;
        removeFrom(slotsByHost, a.getHost(), key);
        removeFrom(slotsByModel, a.getModel(), key);
        removeFrom(occupiedByModel, a.getModel(), key);
        slotModel.remove(key);
        slotInstances.remove(key);
        for (AssignedServiceModel asm : a.getServiceModels()) {
          removeFrom(slotsByServiceModel, asm.getServiceModel(), key);
        }
      }
      default -> { }
    }
  }

  private static <K> void removeFrom(Map<String, ? extends Map<K, ?>> index, String outer, K inner) {
    Map<K, ?> m = index.get(outer);
    if (m != null) {
      m.remove(inner);
      if (m.isEmpty()) {
        index.remove(outer);
      }
    }
  }

  private static void removeFrom(Map<String, TreeSet<String>> index, String outer, String inner) {
    TreeSet<String> s = index.get(outer);
    if (s != null) {
      s.remove(inner);
      if (s.isEmpty()) {
        index.remove(outer);
      }
    }
  }

  /** The host part of a partition key model/version/host/pool. */
  static String partitionHost(String key) {
    String[] parts = key.split(Keys.SEP, 4);
    return parts.length == 4 ? parts[2] : "";
  }

  // ------------------------------------------------------------------ lookups

  /** The running version choice of a model on a host, or null. */
  String chosen(String model, String host) {
    index();
    TreeMap<String, String> of = versionsByModel.get(model);
    return of == null ? null : of.get(host);
  }

  /** The hosts with a live version choice of {@code model}. */
  Set<String> versionHosts(String model) {
    index();
    TreeMap<String, String> of = versionsByModel.get(model);
    return of == null ? Set.of() : Collections.unmodifiableSet(of.keySet());
  }

  /** The models with a live version choice on any host. */
  Set<String> versionModels() {
    index();
    return Collections.unmodifiableSet(versionsByModel.keySet());
  }

  /** model -> chosen version on one host (only models with a chosen version). */
  SortedMap<String, String> chosenOn(String host) {
    index();
    TreeMap<String, String> of = chosenByHost.get(host);
    return of == null ? Collections.emptySortedMap() : Collections.unmodifiableSortedMap(of);
  }

  /** The chosen version of a model on a host, or null; for the mapping's look-ups. */
  String chosenVersion(String model, String host) {
    index();
    TreeMap<String, String> of = chosenByHost.get(host);
    return of == null ? null : of.get(model);
  }

  SortedSet<String> partitionKeys(String host) {
    index();
    TreeSet<String> keys = partitionsByHost.get(host);
    return keys == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(keys);
  }

  /** Hosts with at least one live partition plan predicted from another host's timings, or a default one. */
  Set<String> provisionalHosts() {
    index();
    return Collections.unmodifiableSet(provisionalByHost.keySet());
  }

  /** Hosts with at least one live partition plan. */
  Set<String> partitionHosts() {
    index();
    return Collections.unmodifiableSet(partitionsByHost.keySet());
  }

  SortedSet<String> slotsOfHost(String host) {
    index();
    TreeSet<String> keys = slotsByHost.get(host);
    return keys == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(keys);
  }

  SortedSet<String> slotsOfModel(String model) {
    index();
    TreeSet<String> keys = slotsByModel.get(model);
    return keys == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(keys);
  }

  /** The slots running a base model that hold at least one instance. */
  SortedSet<String> occupiedSlotsOfModel(String model) {
    index();
    TreeSet<String> keys = occupiedByModel.get(model);
    return keys == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(keys);
  }

  SortedSet<String> slotsOfServiceModel(String serviceModel) {
    index();
    TreeSet<String> keys = slotsByServiceModel.get(serviceModel);
    return keys == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(keys);
  }

  /** The base model a live slot runs, or null. */
  String slotModel(String slotKey) {
    index();
    return slotModel.get(slotKey);
  }

  /** The instance ids a live slot holds, in order (empty for an unknown slot). */
  List<String> slotInstances(String slotKey) {
    index();
    return slotInstances.getOrDefault(slotKey, List.of());
  }

  /** Hosts with at least one live slot. */
  Set<String> slotHosts() {
    index();
    return Collections.unmodifiableSet(slotsByHost.keySet());
  }
}

package io.partita.planner.replay;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.stream.InputKind;
import io.partita.planner.stream.PlanTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Re-plans a stretch of recorded history: reads the planner's input topics, optionally applies a
 * what-if {@link Inventory}, runs the planner topology privately ({@link PlanRun}) and compares
 * the plan it makes with the live plan tables.
 *
 * <p>Which records a range {@code [from, to]} (epoch ms, record timestamps) covers: the event topic
 * ({@code profile.timings}) from {@code from} to {@code to}; the table topics (catalog,
 * environments, slot status, demand) from their beginning to {@code to}, because a table's state at
 * {@code to} is built from everything before it. Records are fed in timestamp order (ties: input
 * topic order), each partition in offset order, as Kafka Streams picks them. With the full history ({@code from = 0},
 * {@code to} = now), the plan equals the live one byte for byte.
 */
public final class Replay {
  private Replay() {}

  /** A replay's plan, the live plan it was compared with, and the difference. */
  public record Result(Map<PlanTable, SortedMap<String, byte[]>> replayed,
      Map<PlanTable, SortedMap<String, byte[]>> live, Diff diff) {}

  /**
   * Reads {@code [from, to]}, applies the inventory (may be null), plans in a private topology and
   * compares with the live plan tables of the same topic prefix.
   *
   * @param kafka Kafka client settings ({@code bootstrap.servers} at least)
   * @param stateDir a directory for the private topology's state (deleted by the caller)
   */
  public static Result run(Properties kafka, PlanSettings settings, Codecs codecs, long from, long to,
      Inventory inventory, Path stateDir) {
    if (from > to) {
      throw new IllegalArgumentException("--from " + from + " is after --to " + to);
    }
    List<Recorded> records = read(kafka, settings.topics(), from, to);
    if (inventory != null) {
      records = inventory.apply(records, settings.topics(), codecs);
    }
    Map<PlanTable, SortedMap<String, byte[]>> replayed = plan(records, settings, codecs, stateDir);
    Map<PlanTable, SortedMap<String, byte[]>> live = live(kafka, settings.topics());
    return new Result(replayed, live, diff(replayed, live));
  }

  /** The plan tables: per table, key -> the record's bytes. */
  public static Map<PlanTable, SortedMap<String, byte[]>> emptyTables() {
    Map<PlanTable, SortedMap<String, byte[]>> out = new EnumMap<>(PlanTable.class);
    for (PlanTable t : PlanTable.values()) {
      out.put(t, new TreeMap<>());
    }
    return out;
  }

  /** Reads the recorded inputs of {@code [from, to]} (see the class comment). */
  public static List<Recorded> read(Properties kafka, Topics topics, long from, long to) {
    List<Recorded> out = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer = consumer(kafka)) {
      for (InputKind kind : InputKind.values()) {
        long start = kind == InputKind.TIMINGS ? from : 0;
        readTopic(consumer, kind.topic(topics), start, to).forEach(r -> out.add(
            new Recorded(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(), r.value())));
      }
    }
    return out;
  }

  /** The live plan tables as they stand now (latest committed record per key; tombstones remove). */
  public static Map<PlanTable, SortedMap<String, byte[]>> live(Properties kafka, Topics topics) {
    Map<PlanTable, SortedMap<String, byte[]>> out = emptyTables();
    try (KafkaConsumer<String, byte[]> consumer = consumer(kafka)) {
      for (PlanTable table : PlanTable.values()) {
        for (ConsumerRecord<String, byte[]> r : readTopic(consumer, table.topic(topics), 0, Long.MAX_VALUE)) {
          if (r.value() == null) {
            out.get(table).remove(r.key());
          } else {
            out.get(table).put(r.key(), r.value());
          }
        }
      }
    }
    return out;
  }

  /** Plans the given records in the planner topology; the state directory is used and left for the caller to delete. */
  public static Map<PlanTable, SortedMap<String, byte[]>> plan(List<Recorded> records, PlanSettings settings,
      Codecs codecs, Path stateDir) {
    List<String> order = Arrays.stream(InputKind.values()).map(k -> k.topic(settings.topics())).toList();
    // As Kafka Streams does: each partition in offset order, and across partitions the one whose
    // next record has the smallest timestamp first (ties: input topic order, then partition).
    Map<String, ArrayDeque<Recorded>> queues = new TreeMap<>();
    List<Recorded> byOffset = new ArrayList<>(records);
    byOffset.sort(Comparator.comparingLong(Recorded::offset));
    for (Recorded r : byOffset) {
      String queue = String.format("%03d-%08d", order.indexOf(r.topic()), r.partition());
      queues.computeIfAbsent(queue, q -> new ArrayDeque<>()).add(r);
    }
    List<Recorded> sorted = new ArrayList<>();
    while (!queues.isEmpty()) {
      String pick = null;
      for (Map.Entry<String, ArrayDeque<Recorded>> q : queues.entrySet()) {
        if (pick == null || q.getValue().peekFirst().timestamp() < queues.get(pick).peekFirst().timestamp()) {
          pick = q.getKey();
        }
      }
      sorted.add(queues.get(pick).pollFirst());
      if (queues.get(pick).isEmpty()) {
        queues.remove(pick);
      }
    }
    try (PlanRun run = new PlanRun(settings, codecs, stateDir)) {
      for (Recorded r : sorted) {
        run.pipe(r.topic(), r.key(), r.value(), r.timestamp());
      }
      run.plan();
      return run.tables();
    }
  }

  /** What differs between two plans, per table: keys only in the replay, only live, and with other bytes. */
  public record Diff(Map<PlanTable, List<String>> added, Map<PlanTable, List<String>> removed,
      Map<PlanTable, List<String>> changed) {
    public boolean identical() {
      return added.values().stream().allMatch(List::isEmpty) && removed.values().stream().allMatch(List::isEmpty)
          && changed.values().stream().allMatch(List::isEmpty);
    }
  }

  public static Diff diff(Map<PlanTable, SortedMap<String, byte[]>> replayed, Map<PlanTable, SortedMap<String, byte[]>> live) {
    Map<PlanTable, List<String>> added = new EnumMap<>(PlanTable.class);
    Map<PlanTable, List<String>> removed = new EnumMap<>(PlanTable.class);
    Map<PlanTable, List<String>> changed = new EnumMap<>(PlanTable.class);
    for (PlanTable t : PlanTable.values()) {
      SortedMap<String, byte[]> a = replayed.getOrDefault(t, new TreeMap<>());
      SortedMap<String, byte[]> b = live.getOrDefault(t, new TreeMap<>());
      TreeSet<String> keys = new TreeSet<>(a.keySet());
      keys.addAll(b.keySet());
      List<String> add = new ArrayList<>();
      List<String> rem = new ArrayList<>();
      List<String> chg = new ArrayList<>();
      for (String k : keys) {
        if (!b.containsKey(k)) {
          add.add(k);
        } else if (!a.containsKey(k)) {
          rem.add(k);
        } else if (!Arrays.equals(a.get(k), b.get(k))) {
          chg.add(k);
        }
      }
      added.put(t, add);
      removed.put(t, rem);
      changed.put(t, chg);
    }
    return new Diff(added, removed, changed);
  }

  /** The plan as JSON: {@code {"versions": {key: record}, "mappings": ..., ...}}. */
  public static ObjectNode toJson(Map<PlanTable, SortedMap<String, byte[]>> plan, Topics topics, Codecs codecs) {
    ObjectMapper mapper = new ObjectMapper();
    ObjectNode root = mapper.createObjectNode();
    for (PlanTable t : PlanTable.values()) {
      ObjectNode table = root.putObject(t.id());
      plan.getOrDefault(t, new TreeMap<>()).forEach((key, bytes) -> {
        try {
          table.set(key, mapper.readTree(t.topic(topics, codecs).decode(bytes).toString()));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
    return root;
  }

  /** The diff as JSON, with the replayed and live record of every changed key side by side. */
  public static ObjectNode toJson(Diff diff, Map<PlanTable, SortedMap<String, byte[]>> replayed,
      Map<PlanTable, SortedMap<String, byte[]>> live, Topics topics, Codecs codecs) {
    ObjectMapper mapper = new ObjectMapper();
    ObjectNode root = mapper.createObjectNode();
    root.put("identical", diff.identical());
    ObjectNode replayedJson = toJson(replayed, topics, codecs);
    ObjectNode liveJson = toJson(live, topics, codecs);
    for (PlanTable t : PlanTable.values()) {
      ObjectNode table = root.putObject(t.id());
      ArrayNode added = table.putArray("added");
      diff.added().get(t).forEach(added::add);
      ArrayNode removed = table.putArray("removed");
      diff.removed().get(t).forEach(removed::add);
      ObjectNode changed = table.putObject("changed");
      for (String k : diff.changed().get(t)) {
        ObjectNode pair = changed.putObject(k);
        pair.set("replay", replayedJson.get(t.id()).get(k));
        pair.set("live", liveJson.get(t.id()).get(k));
      }
    }
    return root;
  }

  public static String pretty(Object json) {
    try {
      return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Writes JSON to a file, creating its directory. */
  public static void write(Path file, Object json) {
    try {
      if (file.toAbsolutePath().getParent() != null) {
        Files.createDirectories(file.toAbsolutePath().getParent());
      }
      Files.writeString(file, pretty(json) + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  private static KafkaConsumer<String, byte[]> consumer(Properties kafka) {
    Properties p = new Properties();
    p.putAll(kafka);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "partita-replay-" + UUID.randomUUID());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return new KafkaConsumer<>(p);
  }

  /** Records of one topic with {@code from <= timestamp <= to}, up to the end it has now. */
  private static List<ConsumerRecord<String, byte[]>> readTopic(KafkaConsumer<String, byte[]> consumer, String topic,
      long from, long to) {
    List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
    List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
    if (infos == null || infos.isEmpty()) {
      return out;
    }
    List<TopicPartition> partitions = infos.stream().map(i -> new TopicPartition(i.topic(), i.partition())).toList();
    consumer.assign(partitions);
    Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
    Map<TopicPartition, Long> query = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
    partitions.forEach(tp -> query.put(tp, Math.max(0, from)));
    Map<TopicPartition, OffsetAndTimestamp> starts = consumer.offsetsForTimes(query, Duration.ofSeconds(30));
    for (TopicPartition tp : partitions) {
      OffsetAndTimestamp start = starts.get(tp);
      consumer.seek(tp, start == null ? end.get(tp) : start.offset());
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("reading " + topic + " did not reach its end offsets " + end + " within 120 s");
      }
      for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        if (r.offset() < end.get(new TopicPartition(r.topic(), r.partition())) && r.timestamp() >= from
            && r.timestamp() <= to) {
          out.add(r);
        }
      }
    }
    consumer.unsubscribe();
    return out;
  }
}

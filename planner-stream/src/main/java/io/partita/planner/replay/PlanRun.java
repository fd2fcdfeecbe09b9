package io.partita.planner.replay;

import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.PlannerTopology;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.stream.InputKind;
import io.partita.planner.stream.PlanTable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The planner topology ({@link PlannerTopology#build}, the same builder the live planner uses) run
 * privately in Kafka's test driver: records are piped in with their recorded timestamps, a planning
 * punctuation is fired on demand, and the plan tables are collected as the latest bytes per key.
 * Used by {@code partita replay} and by the topology tests. Nothing touches a broker.
 */
public final class PlanRun implements AutoCloseable {
  /** The debounce interval inside the driver; only the driver's simulated clock ever sees it. */
  public static final Duration DEBOUNCE = Duration.ofSeconds(1);

  private final TopologyTestDriver driver;
  private final Topics topics;
  private final Map<String, TestInputTopic<String, byte[]>> inputs = new TreeMap<>();
  private final Map<PlanTable, TestOutputTopic<String, byte[]>> outputs = new EnumMap<>(PlanTable.class);
  private final TestOutputTopic<String, byte[]> deadLetters;
  private final TestOutputTopic<String, byte[]> profileRequests;
  private final List<KeyValue<String, byte[]>> profileRequestRecords = new ArrayList<>();
  private final TestOutputTopic<String, byte[]> servingTimings;
  private final List<KeyValue<String, byte[]>> servingTimingRecords = new ArrayList<>();
  private final Map<PlanTable, SortedMap<String, byte[]>> tables = new EnumMap<>(PlanTable.class);
  private final List<KeyValue<String, byte[]>> deadLetterRecords = new ArrayList<>();
  private final Map<PlanTable, Integer> emissions = new EnumMap<>(PlanTable.class);

  public PlanRun(PlanSettings settings, Codecs codecs, Path stateDir) {
    this(settings, codecs, stateDir, PlannerMetrics.inMemory());
  }

  /** As above, recording the planner's metrics into {@code metrics}. */
  public PlanRun(PlanSettings settings, Codecs codecs, Path stateDir,
      PlannerMetrics metrics) {
    this(settings, codecs, stateDir, metrics, false);
  }

  /**
   * As above; {@code exhaustive} re-plans every key in every pass ({@link PlannerTopology#build(PlanSettings,
   * Codecs, Duration, PlannerMetrics, boolean, boolean)}).
   */
  public PlanRun(PlanSettings settings, Codecs codecs, Path stateDir,
      PlannerMetrics metrics, boolean exhaustive) {
    this.topics = settings.topics();
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, topics.prefix() + "-replay");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "replay.invalid:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    // The driver holds one record at a time, so there is never a choice between partitions to wait
    // for: idling changes no order. Disabled, the task skips the readiness check that Kafka 4.3.1
    // runs for every record, which formats a log line per empty input partition with String.format
    // whether or not TRACE is on (about a fifth of a replay's time).
    props.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, Long.toString(StreamsConfig.MAX_TASK_IDLE_MS_DISABLED));
    // The simulated wall clock starts at the epoch, so what the planner asks (request ids, rate
    // limits) is the same on every run.
    driver = new TopologyTestDriver(PlannerTopology.build(settings, codecs, DEBOUNCE, metrics, false, exhaustive), props, Instant.EPOCH);
    for (InputKind kind : InputKind.values()) {
      String topic = kind.topic(topics);
      inputs.put(topic, driver.createInputTopic(topic, new StringSerializer(), new ByteArraySerializer()));
    }
    for (PlanTable table : PlanTable.values()) {
      outputs.put(table, driver.createOutputTopic(table.topic(topics), new StringDeserializer(), new ByteArrayDeserializer()));
      tables.put(table, new TreeMap<>());
      emissions.put(table, 0);
    }
    deadLetters = driver.createOutputTopic(topics.deadLetter(), new StringDeserializer(), new ByteArrayDeserializer());
    profileRequests = driver.createOutputTopic(topics.profileRequests(), new StringDeserializer(),
        new ByteArrayDeserializer());
    // The driver feeds what the planner writes to an input topic back in itself (the measurements
    // it records from serving evidence); this only reads what was written.
    servingTimings = driver.createOutputTopic(topics.profileTimings(), new StringDeserializer(),
        new ByteArrayDeserializer());
  }

  public Topics topics() {
    return topics;
  }

  /** Feeds one recorded record to the input topic it came from. */
  public void pipe(String topic, String key, byte[] value, long timestampMs) {
    TestInputTopic<String, byte[]> input = inputs.get(topic);
    if (input == null) {
      throw new IllegalArgumentException("topic " + topic + " is not a planner input; inputs are " + inputs.keySet());
    }
    input.pipeInput(key, value, timestampMs);
  }

  /** Fires the planning punctuation once and collects what it emitted. */
  public void plan() {
    driver.advanceWallClockTime(DEBOUNCE);
    collect();
  }

  private void collect() {
    for (PlanTable table : PlanTable.values()) {
      for (KeyValue<String, byte[]> kv : outputs.get(table).readKeyValuesToList()) {
        emissions.merge(table, 1, Integer::sum);
        if (kv.value == null) {
          tables.get(table).remove(kv.key);
        } else {
          tables.get(table).put(kv.key, kv.value);
        }
      }
    }
    deadLetterRecords.addAll(deadLetters.readKeyValuesToList());
    profileRequestRecords.addAll(profileRequests.readKeyValuesToList());
    servingTimingRecords.addAll(servingTimings.readKeyValuesToList());
  }

  /** The plan so far: per table, the latest bytes per key (tombstoned keys removed). */
  public Map<PlanTable, SortedMap<String, byte[]>> tables() {
    collect();
    Map<PlanTable, SortedMap<String, byte[]>> out = new EnumMap<>(PlanTable.class);
    tables.forEach((t, m) -> out.put(t, new TreeMap<>(m)));
    return out;
  }

  /** The latest bytes of one plan record, or null when the key has none: for a few keys, without copying every table. */
  public byte[] plan(PlanTable table, String key) {
    collect();
    return tables.get(table).get(key);
  }

  /** How many records (tombstones included) each plan topic has received so far. */
  public Map<PlanTable, Integer> emissions() {
    collect();
    return new EnumMap<>(emissions);
  }

  /** The profile requests (grouping-mode measurements) the planner asked for so far, key = host. */
  public List<KeyValue<String, byte[]>> profileRequests() {
    collect();
    return List.copyOf(profileRequestRecords);
  }

  /** The timing events the planner wrote (grouping-mode measurements from serving evidence) so far. */
  public List<KeyValue<String, byte[]>> servingTimings() {
    collect();
    return List.copyOf(servingTimingRecords);
  }

  /** Moves the simulated wall clock on (the clock of asking: rate limit, timeouts); planning punctuations due meanwhile run. */
  public void advanceWallClock(Duration by) {
    driver.advanceWallClockTime(by);
    collect();
  }

  /**
   * Bytes held per state store of the run (UTF-8 keys plus values), by store name: what the live
   * planner keeps in RocksDB and its changelogs, without their own overhead.
   */
  public SortedMap<String, Long> storeBytes() {
    SortedMap<String, Long> out = new TreeMap<>();
    for (String name : driver.getAllStateStores().keySet()) {
      KeyValueStore<String, byte[]> store = driver.getKeyValueStore(name);
      long bytes = 0;
      try (KeyValueIterator<String, byte[]> it = store.all()) {
        while (it.hasNext()) {
          KeyValue<String, byte[]> kv = it.next();
          bytes += kv.key.getBytes(StandardCharsets.UTF_8).length + (kv.value == null ? 0 : kv.value.length);
        }
      }
      out.put(name, bytes);
    }
    return out;
  }

  public List<KeyValue<String, byte[]>> deadLetters() {
    collect();
    return List.copyOf(deadLetterRecords);
  }

  @Override
  public void close() {
    driver.close();
  }
}

package io.partita.gateway.dashboard;

import io.partita.avro.DeadLetter;
import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.JobStatus;
import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionChoice;
import io.partita.common.Topics;
import io.partita.common.Topic;
import io.partita.common.serde.Codecs;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.specific.SpecificRecord;

/**
 * What the dashboard knows from the topics: the latest record per key of each compacted topic it
 * shows (a tombstone removes the key), the latest timing per measured point, and the last dead
 * letters. Written by one reader thread ({@link #apply}), read by any thread; no Kafka types, so it
 * is fed directly in tests.
 *
 * <p>A record that cannot be decoded is counted in {@link #undecodable()} and skipped: the
 * dashboard shows what it can read and never dead-letters (it only reads).
 */
public final class DashboardState {
  /** One dead letter as it was read, with where it sits on the dead-letter topic. */
  public record Letter(long offset, long timestamp, DeadLetter letter) {}

  final Topics topics;
  private final int deadLetters;
  private final Map<String, Table<?>> byTopic;
  final Table<HostEnvironment> hosts;
  final Table<HostLiveness> liveness;
  final Table<ServiceModel> catalog;
  final Table<TimingEvent> timings;
  final Table<PartitionPlan> partitions;
  final Table<SlotAssignment> assignments;
  final Table<VersionChoice> versions;
  final Table<Route> routes;
  final Table<Demand> demand;
  final Table<JobStatus> jobs;
  private final Topic<DeadLetter> letterTopic;
  private final ArrayDeque<Letter> letters = new ArrayDeque<>();
  private final AtomicLong undecodable = new AtomicLong();
  private final AtomicLong changes = new AtomicLong();

  /** @param deadLetters how many of the last dead letters to keep */
  public DashboardState(Topics topics, Codecs codecs, int deadLetters) {
    this.topics = topics;
    this.deadLetters = deadLetters;
    this.hosts = new Table<>(topics.hostEnvironments(codecs));
    this.liveness = new Table<>(topics.hostLiveness(codecs));
    this.catalog = new Table<>(topics.catalogServices(codecs));
    this.timings = new Table<>(topics.profileTimings(codecs));
    this.partitions = new Table<>(topics.planPartitions(codecs));
    this.assignments = new Table<>(topics.planAssignments(codecs));
    this.versions = new Table<>(topics.planVersions(codecs));
    this.routes = new Table<>(topics.planRoutes(codecs));
    this.demand = new Table<>(topics.demand(codecs));
    this.jobs = new Table<>(topics.jobStatus(codecs));
    this.letterTopic = topics.deadLetter(codecs);
    Map<String, Table<?>> tables = new HashMap<>();
    for (Table<?> t : List.of(hosts, liveness, catalog, timings, partitions, assignments, versions, routes, demand, jobs)) {
      tables.put(t.topic.name(), t);
    }
    this.byTopic = Map.copyOf(tables);
  }

  /** The compacted topics read from their beginning. */
  public List<String> tableTopics() {
    List<String> out = new ArrayList<>(byTopic.keySet());
    out.remove(timings.topic.name());
    out.sort(String::compareTo);
    return out;
  }

  /** The stream topics read from their last records: timings and dead letters. */
  public List<String> streamTopics() {
    return List.of(timings.topic.name(), letterTopic.name());
  }

  /** Applies one record read from {@code topic}; a null value is a tombstone. */
  public void apply(String topic, String key, byte[] value, long offset, long timestamp) {
    try {
      if (topic.equals(letterTopic.name())) {
        if (value != null) {
          DeadLetter letter = letterTopic.decode(value);
          synchronized (letters) {
            letters.addLast(new Letter(offset, timestamp, letter));
            while (letters.size() > deadLetters) {
              letters.removeFirst();
            }
          }
          changes.incrementAndGet();
        }
        return;
      }
      Table<?> table = byTopic.get(topic);
      if (table == null) {
        return;
      }
      if (table == timings && value != null) {
        // The latest measurement of each point wins, whatever key the profiler used.
        TimingEvent e = timings.topic.decode(value);
        timings.rows.put(String.join("/", e.getModel(), e.getVersion(), e.getHost(), e.getPool(),
            Integer.toString(e.getSize()), Integer.toString(e.getBatch()), e.getProvider()), e);
      } else if (key != null) {
        table.apply(key, value);
      }
      changes.incrementAndGet();
    } catch (RuntimeException e) {
      undecodable.incrementAndGet();
    }
  }

  /** The last dead letters, oldest first. */
  public List<Letter> letters() {
    synchronized (letters) {
      return List.copyOf(letters);
    }
  }

  /** How many of the last dead letters are kept: when {@link #letters()} holds this many, older ones were dropped. */
  public int lettersKept() {
    return deadLetters;
  }

  /** Records skipped because they could not be decoded. */
  public long undecodable() {
    return undecodable.get();
  }

  /** Grows on every applied record: a cheap "has anything changed". */
  public long changes() {
    return changes.get();
  }

  /** The latest value per key of one topic, sorted by key. */
  static final class Table<T extends SpecificRecord> {
    final Topic<T> topic;
    final Map<String, T> rows = new ConcurrentSkipListMap<>();

    Table(Topic<T> topic) {
      this.topic = topic;
    }

    void apply(String key, byte[] value) {
      if (value == null) {
        rows.remove(key);
      } else {
        rows.put(key, topic.decode(value));
      }
    }

    List<T> values() {
      return List.copyOf(rows.values());
    }
  }
}

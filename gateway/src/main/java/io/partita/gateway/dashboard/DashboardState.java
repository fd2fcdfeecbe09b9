package io.partita.gateway.dashboard;

import io.partita.avro.DeadLetter;
import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.JobStatus;
import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.SlotAssignment;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionChoice;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import java.util.ArrayDeque;
import java.util.ArrayList;
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

  private final Topics topics;
  private final int deadLetters;
  private final Map<String, Table<?>> byTopic;
  final Table<HostEnvironment> hosts;
  final Table<TimingEvent> timings;
  final Table<PartitionPlan> partitions;
  final Table<SlotAssignment> assignments;
  final Table<VersionChoice> versions;
  final Table<Route> routes;
  final Table<Demand> demand;
  final Table<JobStatus> jobs;
  private final RecordCodec<DeadLetter> letterCodec;
  private final ArrayDeque<Letter> letters = new ArrayDeque<>();
  private final AtomicLong undecodable = new AtomicLong();
  private final AtomicLong changes = new AtomicLong();

  /** @param deadLetters how many of the last dead letters to keep */
  public DashboardState(Topics topics, Codecs codecs, int deadLetters) {
    this.topics = topics;
    this.deadLetters = deadLetters;
    this.hosts = new Table<>(codecs.codec(HostEnvironment.class));
    this.timings = new Table<>(codecs.codec(TimingEvent.class));
    this.partitions = new Table<>(codecs.codec(PartitionPlan.class));
    this.assignments = new Table<>(codecs.codec(SlotAssignment.class));
    this.versions = new Table<>(codecs.codec(VersionChoice.class));
    this.routes = new Table<>(codecs.codec(Route.class));
    this.demand = new Table<>(codecs.codec(Demand.class));
    this.jobs = new Table<>(codecs.codec(JobStatus.class));
    this.letterCodec = codecs.codec(DeadLetter.class);
    this.byTopic = Map.of(
        topics.hostEnvironments(), hosts,
        topics.profileTimings(), timings,
        topics.planPartitions(), partitions,
        topics.planAssignments(), assignments,
        topics.planVersions(), versions,
        topics.planRoutes(), routes,
        topics.demand(), demand,
        topics.jobStatus(), jobs);
  }

  /** The compacted topics read from their beginning. */
  public List<String> tableTopics() {
    List<String> out = new ArrayList<>(byTopic.keySet());
    out.remove(topics.profileTimings());
    out.sort(String::compareTo);
    return out;
  }

  /** The stream topics read from their last records: timings and dead letters. */
  public List<String> streamTopics() {
    return List.of(topics.profileTimings(), topics.deadLetter());
  }

  /** Applies one record read from {@code topic}; a null value is a tombstone. */
  public void apply(String topic, String key, byte[] value, long offset, long timestamp) {
    try {
      if (topic.equals(topics.deadLetter())) {
        if (value != null) {
          DeadLetter letter = letterCodec.decode(topic, value);
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
        TimingEvent e = timings.codec.decode(topic, value);
        timings.rows.put(String.join("/", e.getModel(), e.getVersion(), e.getHost(), e.getPool(),
            Integer.toString(e.getSize()), Integer.toString(e.getBatch()), e.getProvider()), e);
      } else if (key != null) {
        table.apply(topic, key, value);
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
    final RecordCodec<T> codec;
    final Map<String, T> rows = new ConcurrentSkipListMap<>();

    Table(RecordCodec<T> codec) {
      this.codec = codec;
    }

    void apply(String topic, String key, byte[] value) {
      if (value == null) {
        rows.remove(key);
      } else {
        rows.put(key, codec.decode(topic, value));
      }
    }

    List<T> values() {
      return List.copyOf(rows.values());
    }
  }
}

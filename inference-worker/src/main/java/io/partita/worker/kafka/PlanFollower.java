package io.partita.worker.kafka;

import io.partita.avro.SlotAssignment;
import io.partita.common.Topic;
import io.partita.common.health.Fatal;
import io.partita.common.health.Loop;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.TopicFollower;
import io.partita.common.log.RateLimitedLog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows {@code <prefix>.plan.assignments} for one host: reads the compacted topic from the
 * beginning ({@link TopicFollower}: assigned, no group; the consumer is read_committed, so only the
 * planner's committed transactions), keeps the latest assignment per {@code host/slot} key whose
 * host is this one (a tombstone removes the key), and hands the whole set to {@code onChange}
 * whenever it differs from the last set handed over and the reader has caught up (a poll found
 * nothing more: the records of one planner transaction are applied together, not one by one). An
 * empty set is handed over too; what to do with it is the caller's choice.
 *
 * <p>It survives any one record and any passing fault: an undecodable record is skipped (warnings
 * summarised per interval), a failed apply is logged and the next change tried, a failing consumer
 * is retried with back-off (100 ms doubling to 10 s) while the loop says it is not ready. Its
 * {@link Loop} is ready once it has read to the end of the topic. A {@link VirtualMachineError}
 * ends the process ({@link Fatal}).
 */
public final class PlanFollower implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PlanFollower.class);

  private final String host;
  private final Topic<SlotAssignment> assignments;
  private final Consumer<List<SlotAssignment>> onChange;
  private final Map<String, SlotAssignment> current = new TreeMap<>();
  private final TopicFollower follower;
  private List<SlotAssignment> handedOver;

  /**
   * @param consumer a consumer with String keys and byte-array values, isolation.level=read_committed, no group
   * @param onChange called on the follower's thread with this host's assignments, ordered by slot
   */
  public PlanFollower(KafkaConsumer<String, byte[]> consumer, Topic<SlotAssignment> assignments, String host,
                      Consumer<List<SlotAssignment>> onChange, Loop health) {
    this.host = host;
    this.assignments = assignments;
    this.onChange = onChange;
    TopicFollower.Settings settings = TopicFollower.Settings.fromBeginning("a plan assignment", assignments.name())
        .withPoll(Duration.ofMillis(200)).withFaults(TopicFollower.Faults.retry(100, 10_000));
    this.follower = new TopicFollower(consumer, settings, new LoopGuard(health, new RateLimitedLog(log, 60_000)),
        TopicFollower.Reader.actingWhenQuiet(this::take, () -> hand(List.copyOf(current.values()))));
  }

  public void start() {
    follower.start("partita-worker-plan");
  }

  private void hand(List<SlotAssignment> now) {
    if (!now.equals(handedOver)) {
      handedOver = now;
      try {
        onChange.accept(now);
      } catch (RuntimeException e) {
        log.error("Applying the plan's assignments for host {} failed", host, e);
      }
    }
  }

  /** Folds one record into the state; whether this host's part may have changed. Throws on an undecodable record. */
  private boolean take(ConsumerRecord<String, byte[]> r) {
    String key = r.key();
    if (key == null) {
      return false;
    }
    if (r.value() == null) {
      return current.remove(key) != null;
    }
    SlotAssignment a = assignments.decode(r.value());
    if (!host.equals(a.getHost())) {
      return current.remove(key) != null;
    }
    SlotAssignment before = current.put(key, a);
    return !a.equals(before);
  }

  @Override
  public void close() {
    follower.close();
  }
}

package io.partita.worker.kafka;

import io.partita.avro.SlotAssignment;
import io.partita.common.health.Fatal;
import io.partita.common.health.Loop;
import io.partita.common.log.RateLimitedLog;
import io.partita.common.Topic;
import io.partita.schemas.DecodeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows {@code <prefix>.plan.assignments} for one host: reads the compacted topic from the
 * beginning (assigned, no group, read_committed, so only the planner's committed transactions),
 * keeps the latest assignment per {@code host/slot} key whose host is this one (a tombstone removes
 * the key), and hands the whole set to {@code onChange} whenever it differs from the last set handed
 * over and the reader has caught up (a poll found nothing more: the records of one planner
 * transaction are applied together, not one by one). An empty set is handed over too; what to do
 * with it is the caller's choice.
 *
 * <p>It survives any one record and any passing fault: an undecodable record is skipped (warnings
 * summarised per interval), a failed apply is logged and the next change tried, a failing consumer
 * is retried with back-off while the loop says it is not ready. Its {@link Loop} is ready once it
 * has read to the end of the topic. A {@link VirtualMachineError} ends the process ({@link Fatal}).
 */
public final class PlanFollower implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PlanFollower.class);
  private static final Duration POLL = Duration.ofMillis(200);

  private final KafkaConsumer<String, byte[]> consumer;
  private final String topic;
  private final String host;
  private final Topic<SlotAssignment> assignments;
  private final Consumer<List<SlotAssignment>> onChange;
  private final Map<String, SlotAssignment> current = new TreeMap<>();
  private List<SlotAssignment> handedOver;
  private volatile boolean running = true;
  private Thread thread;
  private final Loop health;
  private final RateLimitedLog warnings = new RateLimitedLog(log, 60_000);

  /**
   * @param consumer a consumer with String keys and byte-array values, isolation.level=read_committed, no group
   * @param onChange called on the follower's thread with this host's assignments, ordered by slot
   */
  public PlanFollower(KafkaConsumer<String, byte[]> consumer, Topic<SlotAssignment> assignments, String host,
                      Consumer<List<SlotAssignment>> onChange, Loop health) {
    this.health = health;
    this.consumer = consumer;
    this.topic = assignments.name();
    this.host = host;
    this.assignments = assignments;
    this.onChange = onChange;
  }

  public void start() {
    thread = new Thread(this, "partita-worker-plan");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void run() {
    boolean assigned = false;
    boolean changed = false;
    long backoffMs = 100;
    try {
      while (running) {
        try {
          if (!assigned) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic)) {
              partitions.add(new TopicPartition(topic, p.partition()));
            }
            if (partitions.isEmpty()) {
              throw new IllegalStateException(topic + " has no partitions yet");
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            assigned = true;
          }
          ConsumerRecords<String, byte[]> records = consumer.poll(POLL);
          for (ConsumerRecord<String, byte[]> r : records) {
            changed |= take(r);
          }
          if (records.isEmpty()) {
            health.ready(); // caught up with the plan
            if (changed) {
              changed = false;
              hand(List.copyOf(current.values()));
            }
          }
          backoffMs = 100;
        } catch (WakeupException e) {
          if (running) {
            throw e;
          }
        } catch (RuntimeException e) {
          health.notReady("following " + topic + " failed: " + e.getMessage());
          warnings.warn("plan follower " + e.getClass().getSimpleName(), "Following {} failed ({}); retrying in {} ms; the worker keeps its current slots",
              topic, e.toString(), backoffMs);
          sleep(backoffMs);
          backoffMs = Math.min(10_000, backoffMs * 2);
        }
      }
      health.stopped();
    } catch (Throwable e) {
      Fatal.haltIfFatal("the worker's plan follower", e);
      health.died(e);
      log.error("Following {} stopped: {}; the worker keeps its current slots", topic, e.getMessage(), e);
    } finally {
      warnings.flush();
      consumer.close(Duration.ofSeconds(5));
    }
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

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Folds one record into the state; whether this host's part may have changed. */
  private boolean take(ConsumerRecord<String, byte[]> r) {
    String key = r.key();
    if (key == null) {
      return false;
    }
    if (r.value() == null) {
      return current.remove(key) != null;
    }
    SlotAssignment a;
    try {
      a = assignments.decode(r.value());
    } catch (DecodeException e) {
      warnings.warn("undecodable assignment", "Skipping {}-{}@{} (key {}): not a SlotAssignment: {}",
          r.topic(), r.partition(), r.offset(), key, e.getMessage());
      return false;
    }
    if (!host.equals(a.getHost())) {
      return current.remove(key) != null;
    }
    SlotAssignment before = current.put(key, a);
    return !a.equals(before);
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    if (thread != null) {
      try {
        thread.join(60_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

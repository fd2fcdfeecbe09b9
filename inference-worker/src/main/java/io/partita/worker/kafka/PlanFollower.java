package io.partita.worker.kafka;

import io.partita.avro.SlotAssignment;
import io.partita.common.serde.RecordCodec;
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
 */
public final class PlanFollower implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PlanFollower.class);
  private static final Duration POLL = Duration.ofMillis(200);

  private final KafkaConsumer<String, byte[]> consumer;
  private final String topic;
  private final String host;
  private final RecordCodec<SlotAssignment> codec;
  private final Consumer<List<SlotAssignment>> onChange;
  private final Map<String, SlotAssignment> current = new TreeMap<>();
  private List<SlotAssignment> handedOver;
  private volatile boolean running = true;
  private Thread thread;

  /**
   * @param consumer a consumer with String keys and byte-array values, isolation.level=read_committed, no group
   * @param onChange called on the follower's thread with this host's assignments, ordered by slot
   */
  public PlanFollower(KafkaConsumer<String, byte[]> consumer, String topic, String host, RecordCodec<SlotAssignment> codec,
                      Consumer<List<SlotAssignment>> onChange) {
    this.consumer = consumer;
    this.topic = topic;
    this.host = host;
    this.codec = codec;
    this.onChange = onChange;
  }

  public void start() {
    thread = new Thread(this, "partita-worker-plan");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void run() {
    try {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo p : consumer.partitionsFor(topic)) {
        partitions.add(new TopicPartition(topic, p.partition()));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      boolean changed = false;
      while (running) {
        ConsumerRecords<String, byte[]> records = consumer.poll(POLL);
        for (ConsumerRecord<String, byte[]> r : records) {
          changed |= take(r);
        }
        if (records.isEmpty() && changed) {
          changed = false;
          List<SlotAssignment> now = List.copyOf(current.values());
          if (!now.equals(handedOver)) {
            handedOver = now;
            try {
              onChange.accept(now);
            } catch (RuntimeException e) {
              log.error("Applying the plan's assignments for host {} failed", host, e);
            }
          }
        }
      }
    } catch (WakeupException e) {
      if (running) {
        throw e;
      }
    } catch (RuntimeException e) {
      log.error("Following {} stopped: {}; the worker keeps its current slots", topic, e.getMessage(), e);
    } finally {
      consumer.close(Duration.ofSeconds(5));
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
      a = codec.decode(r.topic(), r.value());
    } catch (DecodeException e) {
      log.warn("Skipping {}-{}@{} (key {}): not a SlotAssignment: {}", r.topic(), r.partition(), r.offset(), key, e.getMessage());
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

package io.partita.planner;

import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import io.partita.common.kafka.RequestTopics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.RequestPartitionCounts;
import io.partita.schemas.DecodeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grows the request topics as the plan gives base models more slots: reads the planner's own
 * {@code <prefix>.plan.assignments} (read_committed, from the beginning, no group), and once a poll
 * finds nothing more, asks {@link RequestPartitionCounts} how many partitions each base model's
 * topic needs and grows those that have fewer ({@link RequestTopics#ensure}). It never shrinks one
 * and never sizes by service models. Workers notice the new partitions at their next metadata
 * refresh and the consumer group spreads them. A failed resize is logged and tried again at the
 * next change; planning itself never waits for it.
 */
final class RequestTopicGrower implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RequestTopicGrower.class);
  private static final Duration POLL = Duration.ofMillis(500);

  private final Consumer<String, byte[]> consumer;
  private final Admin admin;
  private final Topics topics;
  private final io.partita.common.Topic<SlotAssignment> assignments;
  private final int minimum;
  private final short replication;
  private final Map<String, SlotAssignment> current = new HashMap<>();
  private final Map<String, Integer> applied = new TreeMap<>();
  private volatile boolean running = true;
  private Thread thread;

  RequestTopicGrower(Consumer<String, byte[]> consumer, Admin admin, Topics topics, Codecs codecs,
      int minimum, short replication) {
    this.consumer = consumer;
    this.admin = admin;
    this.topics = topics;
    this.assignments = topics.planAssignments(codecs);
    this.minimum = minimum;
    this.replication = replication;
  }

  void start() {
    thread = new Thread(this, "partita-planner-request-topics");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void run() {
    try {
      String topic = assignments.name();
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
          resize();
        }
      }
    } catch (WakeupException e) {
      if (running) {
        log.error("Sizing request topics stopped", e);
      }
    } catch (RuntimeException e) {
      log.error("Sizing request topics stopped: {}; they keep their partitions", e.getMessage(), e);
    } finally {
      consumer.close(Duration.ofSeconds(5));
    }
  }

  private boolean take(ConsumerRecord<String, byte[]> r) {
    if (r.key() == null) {
      return false;
    }
    if (r.value() == null) {
      return current.remove(r.key()) != null;
    }
    try {
      SlotAssignment a = assignments.decode(r.value());
      return !a.equals(current.put(r.key(), a));
    } catch (DecodeException e) {
      log.warn("Skipping {}-{}@{}: not a SlotAssignment: {}", r.topic(), r.partition(), r.offset(), e.getMessage());
      return false;
    }
  }

  private void resize() {
    SortedMap<String, Integer> wanted = RequestPartitionCounts.of(current.values(), topics, minimum);
    Map<String, Integer> larger = new TreeMap<>();
    wanted.forEach((t, n) -> {
      if (n > applied.getOrDefault(t, 0)) {
        larger.put(t, n);
      }
    });
    if (larger.isEmpty()) {
      return;
    }
    try {
      RequestTopics.ensure(admin, larger, replication);
      applied.putAll(larger);
    } catch (RuntimeException e) {
      log.warn("Request topics not resized to {} this time: {}", larger, e.getMessage());
    }
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    if (thread != null) {
      try {
        thread.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}

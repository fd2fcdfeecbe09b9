package io.partita.planner;

import io.partita.avro.SlotAssignment;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.RequestTopics;
import io.partita.common.kafka.TopicFollower;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.RequestPartitionCounts;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grows the request topics as the plan gives base models more slots: follows the planner's own
 * {@code <prefix>.plan.assignments} ({@link TopicFollower}: read_committed, from the beginning, no
 * group), and once a poll finds nothing more, asks {@link RequestPartitionCounts} how many
 * partitions each base model's topic needs and grows those that have fewer
 * ({@link RequestTopics#ensure}). It never shrinks one and never sizes by service models. Workers
 * notice the new partitions at their next metadata refresh and the consumer group spreads them. A
 * failed resize is logged and tried again at the next change; planning itself never waits for it.
 * A failing consumer ends it (logged); the topics keep their partitions.
 */
final class RequestTopicGrower implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RequestTopicGrower.class);

  private final Admin admin;
  private final Topics topics;
  private final Topic<SlotAssignment> assignments;
  private final int minimum;
  private final short replication;
  private final Map<String, SlotAssignment> current = new HashMap<>();
  private final Map<String, Integer> applied = new TreeMap<>();
  private final TopicFollower follower;

  RequestTopicGrower(Consumer<String, byte[]> consumer, Admin admin, Topics topics, Codecs codecs,
      int minimum, short replication) {
    this.admin = admin;
    this.topics = topics;
    this.assignments = topics.planAssignments(codecs);
    this.minimum = minimum;
    this.replication = replication;
    TopicFollower.Settings settings = TopicFollower.Settings.fromBeginning("a plan assignment", assignments.name())
        .withPoll(Duration.ofMillis(500)).withFaults(TopicFollower.Faults.STOP);
    this.follower = new TopicFollower(consumer, settings, LoopGuard.unregistered("planner-request-topics", log),
        TopicFollower.Reader.actingWhenQuiet(this::take, this::resize));
  }

  void start() {
    follower.start("partita-planner-request-topics");
  }

  /** Folds one record into the plan; whether it changed. Throws on an undecodable record. */
  private boolean take(ConsumerRecord<String, byte[]> r) {
    if (r.key() == null) {
      return false;
    }
    if (r.value() == null) {
      return current.remove(r.key()) != null;
    }
    SlotAssignment a = assignments.decode(r.value());
    return !a.equals(current.put(r.key(), a));
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
    follower.close();
  }
}

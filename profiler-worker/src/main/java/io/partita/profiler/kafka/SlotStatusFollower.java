package io.partita.profiler.kafka;

import io.partita.avro.SlotStatus;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.profiler.idle.IdleGate;
import io.partita.profiler.idle.SlotLoad;
import io.partita.schemas.DecodeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows {@code <prefix>.workers.status} (compacted, key {@code host/slot}) from its beginning and
 * feeds the statuses of this host's slots to the {@link IdleGate}: the profiler's view of how busy
 * the host's serving slots are. It assigns the topic's partitions itself (no consumer group, nothing
 * committed: the whole table is read again at each start) and tells the gate once it has read what
 * was on the topic when it began.
 *
 * <p>Best effort, as the statuses themselves are: an undecodable status is skipped (the worker that
 * wrote it owns the topic; it is not dead-lettered here), and a fault reading the topic (no READ
 * permission, say, or a schema registry that cannot be reached) marks the gate unreadable and ends
 * the follower, so measurements go on
 * {@code UNCHECKED} instead of stopping.
 */
public final class SlotStatusFollower implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(SlotStatusFollower.class);
  private static final Duration POLL = Duration.ofMillis(200);
  private static final Duration METADATA = Duration.ofSeconds(30);

  private final Consumer<String, byte[]> consumer;
  private final String topic;
  private final String hostId;
  private final String keyPrefix;
  private final RecordCodec<SlotStatus> codec;
  private final IdleGate gate;
  private volatile boolean running = true;
  private long undecodable;

  public SlotStatusFollower(Consumer<String, byte[]> consumer, Topics topics, Codecs codecs, String hostId, IdleGate gate) {
    this.consumer = consumer;
    this.topic = topics.workerStatus();
    this.hostId = hostId;
    this.keyPrefix = hostId + "/";
    this.codec = codecs.codec(SlotStatus.class);
    this.gate = gate;
  }

  @Override
  public void run() {
    try {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo p : consumer.partitionsFor(topic, METADATA)) {
        partitions.add(new TopicPartition(p.topic(), p.partition()));
      }
      if (partitions.isEmpty()) {
        throw new IllegalStateException("topic " + topic + " has no partitions (create it: the services create it at start)");
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      boolean caughtUp = false;
      while (running) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(POLL)) {
          handle(record);
        }
        if (!caughtUp && end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
          caughtUp = true;
          gate.caughtUp();
          log.debug("Read the slot statuses on {} for host {}", topic, hostId);
        }
      }
    } catch (WakeupException stopping) {
      // close() woke the poll
    } catch (RuntimeException e) {
      if (running) {
        gate.unreadable(e.getClass().getSimpleName() + ": " + e.getMessage());
        log.error("Cannot read the slot statuses on {} (grant the profiler READ on it): measuring without "
            + "waiting for idle slots, condition UNCHECKED", topic, e);
      }
    } finally {
      consumer.close(Duration.ofSeconds(5));
    }
  }

  private void handle(ConsumerRecord<String, byte[]> record) {
    String key = record.key();
    if (record.value() == null) {
      if (key != null && key.startsWith(keyPrefix)) {
        gate.remove(key.substring(keyPrefix.length()));
      }
      return;
    }
    SlotStatus s;
    try {
      s = codec.decode(record.topic(), record.value());
    } catch (DecodeException e) {
      if (undecodable++ == 0) {
        log.warn("Skipping an undecodable slot status at {}-{}@{} (further ones are skipped silently): {}",
            record.topic(), record.partition(), record.offset(), e.getMessage());
      }
      return;
    }
    if (hostId.equals(s.getHost())) {
      gate.update(new SlotLoad(s.getSlot(), s.getHealth(), s.getInFlight(), s.getQueueDepth(), s.getAnswered(),
          s.getTimestamp()));
    }
  }

  /** Stops following; the thread ends after its current poll. */
  public void stop() {
    running = false;
    consumer.wakeup();
  }
}

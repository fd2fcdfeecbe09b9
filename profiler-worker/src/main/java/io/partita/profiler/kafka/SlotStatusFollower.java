package io.partita.profiler.kafka;

import io.partita.avro.SlotStatus;
import io.partita.common.Topics;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.TopicFollower;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.profiler.idle.IdleGate;
import io.partita.profiler.idle.SlotLoad;
import java.time.Duration;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows {@code <prefix>.workers.status} (compacted, key {@code host/slot}) from its beginning and
 * feeds the statuses of this host's slots to the {@link IdleGate}: the profiler's view of how busy
 * the host's serving slots are. It follows the topic's partitions itself ({@link TopicFollower}: no
 * consumer group, nothing committed: the whole table is read again at each start) and tells the gate
 * once it has read what was on the topic when it began.
 *
 * <p>Best effort, as the statuses themselves are: an undecodable status is skipped (warned about in
 * a summary; the worker that wrote it owns the topic, it is not dead-lettered here), and a fault
 * reading the topic (no READ permission, say, or a schema registry that cannot be reached) marks the
 * gate unreadable and ends the follower, so measurements go on {@code UNCHECKED} instead of
 * stopping.
 */
public final class SlotStatusFollower implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(SlotStatusFollower.class);

  private final String topic;
  private final String hostId;
  private final String keyPrefix;
  private final RecordCodec<SlotStatus> codec;
  private final IdleGate gate;
  private final TopicFollower follower;

  public SlotStatusFollower(Consumer<String, byte[]> consumer, Topics topics, Codecs codecs, String hostId, IdleGate gate) {
    this.topic = topics.workerStatus();
    this.hostId = hostId;
    this.keyPrefix = hostId + "/";
    this.codec = codecs.codec(SlotStatus.class);
    this.gate = gate;
    TopicFollower.Settings settings = TopicFollower.Settings.fromBeginning("a slot status", topic)
        .withPoll(Duration.ofMillis(200)).withFaults(TopicFollower.Faults.STOP);
    this.follower = new TopicFollower(consumer, settings, LoopGuard.unregistered("profiler-slot-status", log),
        new TopicFollower.Reader() {
          @Override
          public void apply(ConsumerRecord<String, byte[]> record) {
            handle(record);
          }

          @Override
          public void caughtUp() {
            gate.caughtUp();
            log.debug("Read the slot statuses on {} for host {}", topic, hostId);
          }

          @Override
          public void ended(Throwable failure) {
            if (failure != null) {
              gate.unreadable(failure.getClass().getSimpleName() + ": " + failure.getMessage());
              log.error("Cannot read the slot statuses on {} (grant the profiler READ on it): measuring without "
                  + "waiting for idle slots, condition UNCHECKED", topic);
            }
          }
        });
  }

  @Override
  public void run() {
    follower.run();
  }

  /** Feeds one status of this host to the gate; throws on an undecodable one (the follower passes it over). */
  private void handle(ConsumerRecord<String, byte[]> record) {
    String key = record.key();
    if (record.value() == null) {
      if (key != null && key.startsWith(keyPrefix)) {
        gate.remove(key.substring(keyPrefix.length()));
      }
      return;
    }
    SlotStatus s = codec.decode(record.topic(), record.value());
    if (hostId.equals(s.getHost())) {
      gate.update(new SlotLoad(s.getSlot(), s.getHealth(), s.getInFlight(), s.getQueueDepth(), s.getAnswered(),
          s.getTimestamp()));
    }
  }

  /** Stops following; the thread ends after its current poll. */
  public void stop() {
    follower.close();
  }
}

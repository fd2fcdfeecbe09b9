package io.partita.profiler.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.SlotStatus;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.profiler.idle.IdleGate;
import io.partita.profiler.idle.IdleSettings;
import io.partita.profiler.idle.MeasuringCondition;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Following the slot statuses: only this host's, tombstones, undecodable records, and a topic that cannot be read. */
class SlotStatusFollowerTest {
  private static final Topics TOPICS = new Topics("t");
  private static final RecordCodec<SlotStatus> CODEC = Codecs.singleObject().codec(SlotStatus.class);
  private static final TopicPartition PARTITION = new TopicPartition(TOPICS.workerStatus(), 0);

  private final MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
  private final IdleGate gate = new IdleGate(new IdleSettings(true, 0, 1.0, 0, 60_000), System::currentTimeMillis);
  private final SlotStatusFollower follower = new SlotStatusFollower(consumer, TOPICS, Codecs.singleObject(), "h1", gate);
  private Thread thread;

  @AfterEach
  void stop() throws InterruptedException {
    follower.stop();
    thread.join(10_000);
  }

  private static byte[] status(String host, String slot, int inFlight) {
    return CODEC.encode(TOPICS.workerStatus(), SlotStatus.newBuilder().setHost(host).setSlot(slot).setModel("m")
        .setVersion("1").setPool("cpu").setProvider("CPU").setThreads(1).setHealth("READY").setInFlight(inFlight)
        .setTimestamp(System.currentTimeMillis()).build());
  }

  private void start(long endOffset, Runnable firstPoll) {
    Node node = new Node(0, "localhost", 9092);
    consumer.updatePartitions(TOPICS.workerStatus(),
        List.of(new PartitionInfo(TOPICS.workerStatus(), 0, node, new Node[] {node}, new Node[] {node})));
    consumer.updateBeginningOffsets(Map.of(PARTITION, 0L));
    consumer.updateEndOffsets(Map.of(PARTITION, endOffset));
    consumer.schedulePollTask(firstPoll);
    thread = new Thread(follower);
    thread.start();
  }

  private void add(long offset, String key, byte[] value) {
    consumer.addRecord(new ConsumerRecord<>(TOPICS.workerStatus(), 0, offset, key, value));
  }

  @Test
  void shouldKeepOnlyThisHostsSlotsSkipUndecodableStatusesAndForgetATombstonedSlot() {
    start(4, () -> {
      add(0, "h1/s0", status("h1", "s0", 2));
      add(1, "h2/s0", status("h2", "s0", 7));
      add(2, "h1/bad", "not a slot status".getBytes(StandardCharsets.UTF_8));
      add(3, "h1/s1", status("h1", "s1", 1));
    });

    await().atMost(Duration.ofSeconds(10)).until(() -> gate.reading() != null);
    assertThat(gate.reading().liveSlots()).isEqualTo(2);
    assertThat(gate.reading().inFlight()).isEqualTo(3);

    consumer.schedulePollTask(() -> {
      add(4, "h1/s0", null);
      add(5, "h1/s1", null);
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> gate.reading().condition() == MeasuringCondition.NO_SERVING);
  }

  @Test
  void shouldMarkTheStatusesUnreadableWhenTheTopicCannotBeRead() throws Exception {
    start(0, () -> consumer.setPollException(new TopicAuthorizationException("Not authorized to access topics: [t.workers.status]")));

    await().atMost(Duration.ofSeconds(10)).until(() -> gate.unreadableReason() != null);
    assertThat(gate.unreadableReason()).contains("TopicAuthorizationException").contains("t.workers.status");
    assertThat(gate.await(60_000).condition()).isEqualTo(MeasuringCondition.UNCHECKED);
  }
}

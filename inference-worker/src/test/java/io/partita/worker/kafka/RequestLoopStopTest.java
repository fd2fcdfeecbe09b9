package io.partita.worker.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.health.Loop;
import io.partita.common.health.Loops;
import io.partita.common.serde.Codecs;
import io.partita.worker.metrics.WorkerMetrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * A worker asked to stop while its group rebalances (a host that joined or whose capacity moved, as
 * the many-hosts bench's leaving host met): the group refuses the last commit, and the loop still
 * stops as stopped, not dead. Everything it read was answered before it stopped.
 */
class RequestLoopStopTest {

  @Test
  void shouldStopAsStoppedWhenTheGroupRefusesTheLastCommitDuringARebalance() throws Exception {
    Topics topics = new Topics("stop-test");
    Codecs codecs = Codecs.from(Settings.of(Map.of()));
    String topic = topics.requests("demo", codecs).name();
    TopicPartition partition = new TopicPartition(topic, 0);
    AtomicBoolean rebalancing = new AtomicBoolean();
    AtomicInteger refused = new AtomicInteger();
    MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest") {
      @Override
      public synchronized void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (rebalancing.get()) {
          refused.incrementAndGet();
          throw new RebalanceInProgressException("the group is rebalancing");
        }
        super.commitSync(offsets);
      }
    };
    consumer.schedulePollTask(() -> {
      consumer.rebalance(List.of(partition));
      consumer.updateBeginningOffsets(Map.of(partition, 0L));
      // Not a request: dead-lettered (no reply-to to answer), which answers it without a slot.
      consumer.addRecord(new ConsumerRecord<>(topic, 0, 0L, "k", "not avro".getBytes(StandardCharsets.UTF_8)));
    });
    MockProducer<String, byte[]> producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    Loop health = new Loops().register("worker-requests");
    RequestLoop loop = new RequestLoop(consumer, producer, null, topics, codecs,
        new RequestLoop.Settings(List.of(topic), 100, 1_000), new WorkerMetrics(new SimpleMeterRegistry()),
        System::currentTimeMillis, owned -> { }, health);
    Thread thread = new Thread(loop, "request-loop-under-test");
    thread.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> producer.history().size() == 1 && health.isReady());
    rebalancing.set(true);
    loop.stop();
    thread.join(10_000);

    assertThat(thread.isAlive()).isFalse();
    assertThat(refused.get()).as("the last commit was tried, and refused").isPositive();
    assertThat(loop.failure()).isNull();
    assertThat(health.snapshot().state()).isEqualTo(Loop.State.STOPPED);
    assertThat(producer.history().get(0).topic()).as("the record was dead-lettered").isEqualTo(topics.deadLetter(codecs).name());
  }
}

package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.HostLiveness;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.serde.Codecs;
import io.partita.testkit.KafkaFixture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The host watcher against a real broker: a host's worker joining the workers' group is recorded
 * PRESENT, its leaving LEFT; a member whose client id names no host is not a host; an unchanged
 * group writes nothing.
 */
@ExtendWith(KafkaFixture.class)
class HostWatcherIT {
  private static final Codecs CODECS = Codecs.singleObject();

  @Test
  void shouldRecordAHostWhoseWorkerJoinsAndLeavesTheWorkersGroup() throws Exception {
    Topics topics = new Topics(KafkaFixture.uniquePrefix("watch"));
    String requests = topics.requests("demo-mlp");
    try (Admin admin = KafkaFixture.admin();
         KafkaProducer<String, byte[]> producer = new KafkaProducer<>(KafkaClients.producer(KafkaFixture.bootstrapServers(), new Properties()))) {
      admin.createTopics(List.of(new NewTopic(requests, 2, (short) 1), new NewTopic(topics.hostLiveness(), 1, (short) 1))).all().get();
      HostWatcher watcher = new HostWatcher(admin, producer, topics, CODECS, 100);
      watcher.look(); // no group yet: nothing to record

      Member worker = new Member(topics, Topics.workerClientId("host-7"), requests);
      Member stranger = new Member(topics, "some-tool", requests);
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        watcher.look();
        assertThat(latest(topics)).containsOnlyKeys("host-7");
      });
      assertThat(latest(topics).get("host-7").getState()).isEqualTo("PRESENT");
      int records = all(topics).size();
      watcher.look();
      assertThat(all(topics)).hasSize(records); // nothing changed, nothing written

      worker.close();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        watcher.look();
        assertThat(latest(topics).get("host-7").getState()).isEqualTo("LEFT");
      });
      stranger.close();
    }
  }

  /** A consumer in the workers' group, polled on its own thread (as a worker's request loop polls) until closed. */
  private static final class Member implements AutoCloseable {
    private final Thread thread;
    private volatile boolean running = true;

    Member(Topics topics, String clientId, String topic) {
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaFixture.bootstrapServers());
      p.put(ConsumerConfig.GROUP_ID_CONFIG, topics.workersGroup());
      p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
      p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
      thread = new Thread(() -> {
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p);
        try {
          consumer.subscribe(Set.of(topic));
          while (running) {
            consumer.poll(Duration.ofMillis(50));
          }
        } finally {
          consumer.close(CloseOptions.timeout(Duration.ofSeconds(5))
              .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
        }
      }, "member-" + clientId);
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      running = false;
      thread.join(30_000);
    }
  }

  private static List<ConsumerRecord<String, byte[]>> all(Topics topics) {
    return KafkaFixture.read(Integer.MAX_VALUE, Duration.ofSeconds(2), topics.hostLiveness());
  }

  private static Map<String, HostLiveness> latest(Topics topics) {
    Topic<HostLiveness> topic = topics.hostLiveness(CODECS);
    Map<String, HostLiveness> out = new TreeMap<>();
    for (ConsumerRecord<String, byte[]> r : all(topics)) {
      out.put(r.key(), topic.decode(r.value()));
    }
    return out;
  }
}

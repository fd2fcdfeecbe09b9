package io.partita.worker.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.worker.balance.TopicCapacity;
import io.partita.testkit.KafkaFixture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The capacity assignor in a real consumer group: two members advertising capacities 3:1 own the
 * request topic's partitions 6:2, a changed capacity moves partitions once the member asks for a
 * new round, and a member leaving hands its partitions over.
 */
@ExtendWith(KafkaFixture.class)
class CapacityAssignorIT {
  private final List<Member> members = new java.util.ArrayList<>();

  /** A group member polling on its own thread, as the worker's request loop does. */
  private static final class Member implements AutoCloseable {
    final AtomicReference<Map<String, TopicCapacity>> offer;
    final CapacityAssignor.Advertised advertised;
    final AtomicReference<Set<TopicPartition>> owned = new AtomicReference<>(Set.of());
    final ConcurrentLinkedQueue<Consumer<KafkaConsumer<String, byte[]>>> actions = new ConcurrentLinkedQueue<>();
    final Thread thread;
    volatile boolean running = true;

    /** A static member ({@code group.instance.id}), as the workers of partita local and partita cluster are. */
    Member(String group, String topic, double capacity, String instanceId) {
      this(group, topic, Map.of(topic, new TopicCapacity(capacity, 1, 0)), instanceId);
    }

    Member(String group, String topic, Map<String, TopicCapacity> offers, String instanceId) {
      offer = new AtomicReference<>(offers);
      advertised = new CapacityAssignor.Advertised(offer::get);
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaFixture.bootstrapServers());
      p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
      p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
      p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
          CapacityAssignor.class.getName() + "," + CooperativeStickyAssignor.class.getName());
      p.put(CapacityAssignor.ADVERTISED_CONFIG, advertised);
      if (instanceId != null) {
        p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
      }
      thread = new Thread(() -> {
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p);
        try {
          consumer.subscribe(List.of(topic));
          while (running) {
            consumer.poll(Duration.ofMillis(50));
            Consumer<KafkaConsumer<String, byte[]>> action;
            while ((action = actions.poll()) != null) {
              action.accept(consumer);
            }
            owned.set(Set.copyOf(consumer.assignment()));
          }
        } finally {
          consumer.close(CloseOptions.timeout(Duration.ofSeconds(5))
              .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
        }
      }, "capacity-member");
      thread.start();
    }

    int count() {
      return owned.get().size();
    }

    @Override
    public void close() throws InterruptedException {
      running = false;
      thread.join(30_000);
    }
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    for (Member m : members) {
      m.close();
    }
  }

  @Test
  void shouldSharePartitionsByCapacityAndFollowAChangeAndALeave() throws Exception {
    String topic = KafkaFixture.uniquePrefix("capacity") + ".requests.heavy";
    String group = topic + ".workers";
    KafkaFixture.admin().createTopics(List.of(new NewTopic(topic, 8, (short) 1))).all().get();
    Member fast = new Member(group, topic, 300, "worker-fast");
    members.add(fast);
    Member slow = new Member(group, topic, 100, "worker-slow");
    members.add(slow);

    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      assertThat(fast.count()).isEqualTo(6);
      assertThat(slow.count()).isEqualTo(2);
    });

    // the slow host's slots are re-planned to the fast one's capacity: it asks for a new round
    slow.offer.set(Map.of(topic, new TopicCapacity(300, 1, 0)));
    assertThat(slow.advertised.changed()).isTrue();
    slow.actions.add(c -> c.enforceRebalance("test: capacity changed"));
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      assertThat(fast.count()).isEqualTo(4);
      assertThat(slow.count()).isEqualTo(4);
    });
    assertThat(slow.advertised.changed()).isFalse();

    slow.close(); // a static member leaves the group on close, as the worker's request loop does
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(fast.count()).isEqualTo(8));
  }

  @Test
  void shouldNotAskForARoundWhileAloneInTheGroupButShouldOnceAnotherMemberJoined() throws Exception {
    String topic = KafkaFixture.uniquePrefix("capacity") + ".requests.alone";
    String group = topic + ".workers";
    KafkaFixture.admin().createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
    Member alone = new Member(group, topic, 100, "worker-alone");
    members.add(alone);
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(alone.count()).isEqualTo(4));
    await().atMost(Duration.ofSeconds(10)).until(() -> alone.advertised.groupSize() == 1);

    // alone, it owns every partition whatever it offers: a round would move nothing
    alone.offer.set(Map.of(topic, new TopicCapacity(300, 2, 0)));
    assertThat(alone.advertised.changed()).isFalse();

    Member other = new Member(group, topic, 100, "worker-other");
    members.add(other);
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      assertThat(alone.advertised.groupSize()).isEqualTo(2);
      assertThat(alone.count() + other.count()).isEqualTo(4);
    });
    // with another member, the same kind of change is worth a round
    alone.offer.set(Map.of(topic, new TopicCapacity(900, 3, 0)));
    assertThat(alone.advertised.changed()).isTrue();
  }

  @Test
  void shouldGiveAMemberWithoutASlotOfTheModelNoPartition() throws Exception {
    String topic = KafkaFixture.uniquePrefix("capacity") + ".requests.demo";
    KafkaFixture.admin().createTopics(List.of(new NewTopic(topic, 4, (short) 1))).all().get();
    Member serving = new Member(topic + ".workers", topic, Map.of(topic, new TopicCapacity(50, 1, 0)), null);
    members.add(serving);
    Member idle = new Member(topic + ".workers", topic, Map.of(), null);
    members.add(idle);

    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      assertThat(serving.count()).isEqualTo(4);
      assertThat(idle.count()).isZero();
    });
  }
}

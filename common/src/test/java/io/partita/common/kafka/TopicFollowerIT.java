package io.partita.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.partita.common.health.Loop;
import io.partita.common.health.LoopGuard;
import io.partita.common.health.Loops;
import io.partita.common.log.RateLimitedLog;
import io.partita.testkit.KafkaFixture;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/** The one topic follower, against a real broker: caught up, skipping, new partitions, close, faults. */
@ExtendWith(KafkaFixture.class)
class TopicFollowerIT {
  private final Loops loops = new Loops();
  private final List<TopicFollower> followers = new CopyOnWriteArrayList<>();

  /** Applies "ok:..." values, throws on anything else: the stand-in for a reader's decoder. */
  private static final class Values implements TopicFollower.Reader {
    final List<String> applied = new CopyOnWriteArrayList<>();
    final List<Long> skipped = new CopyOnWriteArrayList<>();
    final AtomicReference<Integer> appliedWhenCaughtUp = new AtomicReference<>();
    final AtomicReference<Throwable> ended = new AtomicReference<>();
    volatile boolean endedCalled;

    @Override
    public void apply(ConsumerRecord<String, byte[]> record) {
      String value = new String(record.value(), StandardCharsets.UTF_8);
      if (!value.startsWith("ok:")) {
        throw new IllegalArgumentException("not a value: " + value);
      }
      applied.add(value.substring(3));
    }

    @Override
    public void skipped(ConsumerRecord<String, byte[]> record, Throwable cause) {
      skipped.add(record.offset());
    }

    @Override
    public void caughtUp() {
      appliedWhenCaughtUp.set(applied.size());
    }

    @Override
    public void ended(Throwable failure) {
      ended.set(failure);
      endedCalled = true;
    }
  }

  @AfterEach
  void closeFollowers() {
    followers.forEach(TopicFollower::close);
  }

  private static String topic(String name, int partitions) throws Exception {
    String topic = KafkaFixture.uniquePrefix("follow") + "." + name;
    try (Admin admin = KafkaFixture.admin()) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    return topic;
  }

  private static void write(String topic, String... values) throws Exception {
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      for (String value : values) {
        producer.send(new ProducerRecord<>(topic, 0, "k", value.getBytes(StandardCharsets.UTF_8))).get();
      }
    }
  }

  private static KafkaConsumer<String, byte[]> consumer() {
    Properties p = KafkaClients.consumer(KafkaFixture.bootstrapServers(), new Properties());
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false"); // a missing topic stays missing
    p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "300"); // new partitions show within a second
    return new KafkaConsumer<>(p);
  }

  /** A follower started on its own thread, with its loop and what it applied. */
  private record Followed(TopicFollower follower, LoopGuard guard, Values values) {}

  private Followed follow(String name, TopicFollower.Settings settings) {
    LoopGuard guard = new LoopGuard(loops.register(name), new RateLimitedLog(LoggerFactory.getLogger(TopicFollowerIT.class), 60_000));
    Values values = new Values();
    TopicFollower follower = new TopicFollower(consumer(), settings, guard, values);
    followers.add(follower);
    follower.start("test-follower-" + name);
    return new Followed(follower, guard, values);
  }

  @Test
  void shouldBeCaughtUpAndReadyOnAnEmptyTopic() throws Exception {
    String topic = topic("empty", 2);
    Followed f = follow("empty", TopicFollower.Settings.fromBeginning("a value", topic));

    f.follower().caughtUp().get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> f.guard().loop().isReady());
    assertThat(f.values().appliedWhenCaughtUp.get()).isZero();
    assertThat(f.follower().following()).isTrue();
  }

  @Test
  void shouldApplyEveryRecordWrittenBeforeStartBeforeSayingItIsCaughtUpThenFollowTheNextOnes() throws Exception {
    String topic = topic("full", 1);
    write(topic, "ok:a", "ok:b", "ok:c");
    Followed f = follow("full", TopicFollower.Settings.fromBeginning("a value", topic));

    f.follower().caughtUp().get(30, TimeUnit.SECONDS);
    assertThat(f.values().appliedWhenCaughtUp.get()).isEqualTo(3);
    assertThat(f.values().applied).containsExactly("a", "b", "c");

    write(topic, "ok:d");
    await().atMost(Duration.ofSeconds(10)).until(() -> f.values().applied.size() == 4);
    assertThat(f.values().applied).endsWith("d");
    assertThat(f.guard().loop().isReady()).isTrue();
  }

  @Test
  void shouldReadOnlyWhatIsWrittenAfterStartWhenFollowingFromTheEnd() throws Exception {
    String topic = topic("end", 1);
    write(topic, "ok:before");
    Followed f = follow("end", TopicFollower.Settings.fromEnd("a value", topic));

    f.follower().caughtUp().get(30, TimeUnit.SECONDS);
    write(topic, "ok:after");
    await().atMost(Duration.ofSeconds(10)).until(() -> !f.values().applied.isEmpty());
    assertThat(f.values().applied).containsExactly("after");
  }

  @Test
  void shouldSkipAndCountRecordsTheReaderCannotApplyAndKeepTheOthers() throws Exception {
    String topic = topic("poison", 1);
    write(topic, "ok:a", "garbage", "ok:b", "more garbage", "ok:c");
    Followed f = follow("poison", TopicFollower.Settings.fromBeginning("a value", topic));

    f.follower().caughtUp().get(30, TimeUnit.SECONDS);
    assertThat(f.values().applied).containsExactly("a", "b", "c");
    assertThat(f.values().skipped).containsExactly(1L, 3L);
    assertThat(f.guard().skippedCount()).isEqualTo(2);
    await().atMost(Duration.ofSeconds(10)).until(() -> f.guard().loop().isReady());
  }

  @Test
  void shouldFollowAPartitionAddedAfterStartFromItsBeginning() throws Exception {
    String topic = topic("grows", 1);
    Followed f = follow("grows", TopicFollower.Settings.fromBeginning("a value", topic)
        .withDiscoverEvery(Duration.ofMillis(100)));
    f.follower().caughtUp().get(30, TimeUnit.SECONDS);

    try (Admin admin = KafkaFixture.admin()) {
      admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get(30, TimeUnit.SECONDS);
    }
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      producer.send(new ProducerRecord<>(topic, 1, "k", "ok:on-the-new-partition".getBytes(StandardCharsets.UTF_8))).get();
    }

    await().atMost(Duration.ofSeconds(30)).until(() -> f.values().applied.contains("on-the-new-partition"));
  }

  @Test
  void shouldStopItsThreadAndCloseTheConsumerOnClose() throws Exception {
    String topic = topic("close", 1);
    Followed f = follow("close", TopicFollower.Settings.fromBeginning("a value", topic));
    f.follower().caughtUp().get(30, TimeUnit.SECONDS);

    f.follower().close();

    assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName).doesNotContain("test-follower-close");
    assertThat(f.values().endedCalled).isTrue();
    assertThat(f.values().ended.get()).isNull();
    assertThat(f.follower().following()).isFalse();
    assertThat(f.guard().loop().snapshot().state()).isEqualTo(Loop.State.STOPPED);
  }

  @Test
  void shouldNotBeReadyWhileItsTopicIsMissingAndRecoverOnceItExists() throws Exception {
    String topic = KafkaFixture.uniquePrefix("follow") + ".late";
    Followed f = follow("late", TopicFollower.Settings.fromBeginning("a value", topic)
        .withPartitionWait(Duration.ofMillis(200)).withFaults(TopicFollower.Faults.retry(100, 200)));

    await().atMost(Duration.ofSeconds(30)).until(() -> f.guard().faultCount() >= 1);
    assertThat(f.guard().loop().snapshot().state()).isEqualTo(Loop.State.NOT_READY);
    assertThat(f.guard().loop().snapshot().reason()).contains(topic).contains("has no partitions");

    try (Admin admin = KafkaFixture.admin()) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    write(topic, "ok:a");
    f.follower().caughtUp().get(30, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(10)).until(() -> f.guard().loop().isReady() && f.values().applied.contains("a"));
  }

  @Test
  void shouldEndWithTheFailureWhenFaultsStopIt() throws Exception {
    String topic = KafkaFixture.uniquePrefix("follow") + ".missing";
    Followed f = follow("missing", TopicFollower.Settings.fromBeginning("a value", topic)
        .withPartitionWait(Duration.ofMillis(200)).withFaults(TopicFollower.Faults.STOP));

    await().atMost(Duration.ofSeconds(30)).until(() -> f.values().endedCalled);
    assertThat(f.values().ended.get()).isInstanceOf(UnknownTopicOrPartitionException.class);
    assertThat(f.follower().caughtUp()).isCompletedExceptionally();
    assertThat(f.guard().loop().snapshot().state()).isEqualTo(Loop.State.DEAD);
  }

  @Test
  void shouldReadASnapshotToTheEndOnTheCallersThread() throws Exception {
    String topic = topic("snapshot", 1);
    write(topic, "ok:a", "junk", "ok:b");
    LoopGuard guard = LoopGuard.unregistered("snapshot", LoggerFactory.getLogger(TopicFollowerIT.class));
    Values values = new Values();

    boolean read = new TopicFollower(consumer(), TopicFollower.Settings.fromBeginning("a value", topic)
        .withFaults(TopicFollower.Faults.STOP), guard, values).readToEnd(Duration.ofSeconds(30));

    assertThat(read).isTrue();
    assertThat(values.applied).containsExactly("a", "b");
    assertThat(guard.skippedCount()).isEqualTo(1);

    String missing = KafkaFixture.uniquePrefix("follow") + ".none";
    assertThatThrownBy(() -> new TopicFollower(consumer(), TopicFollower.Settings.fromBeginning("a value", missing)
        .withFaults(TopicFollower.Faults.STOP), guard, new Values()).readToEnd(Duration.ofMillis(500)))
        .isInstanceOf(UnknownTopicOrPartitionException.class).hasMessageContaining(missing);
  }
}

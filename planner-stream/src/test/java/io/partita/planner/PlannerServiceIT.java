package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.timing;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.PartitionPlan;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.catalog.CatalogPublisher;
import io.partita.planner.stream.InputKind;
import io.partita.planner.stream.PlanTable;
import io.partita.testkit.KafkaFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The live planner against a real broker: catalog publishing, planning, restart from changelogs. */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class PlannerServiceIT {
  static final Codecs CODECS = Codecs.singleObject();
  @TempDir Path dir;

  static PlannerConfig config(String prefix, String applicationId, Path stateDir) {
    return PlannerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", prefix,
        "planner.application.id", applicationId,
        "planner.state.dir", stateDir.toString(),
        "planner.debounce.ms", "100",
        "planner.replication.factor", "1",
        "topics.replication", "1")));
  }

  @SuppressWarnings("unchecked")
  static <T extends SpecificRecord> void send(KafkaProducer<String, byte[]> producer, String topic, String key, T value)
      throws Exception {
    producer.send(new ProducerRecord<>(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value))).get();
  }

  static String[] planTopics(Topics topics) {
    return Arrays.stream(PlanTable.values()).map(t -> t.topic(topics)).toArray(String[]::new);
  }

  /** Publishes the demo catalog, a 4-core host and demo-mlp/1 timings; waits until it is planned. */
  static void recordDemoHistory(Topics topics, Path repo) throws Exception {
    DemoRepository.writeTo(repo);
    try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
      CatalogPublisher.publish(producer, ModelRepository.scan(repo), topics, CODECS);
      await().atMost(Duration.ofSeconds(60)).until(() -> Committed.readAll(topics.planRoutes()).size() >= 4);
      send(producer, topics.hostEnvironments(), "host-a", host("host-a", 4, 0));
      send(producer, topics.profileTimings(), "t1", timing("demo-mlp", "1", "host-a", "cpu", 1, 10.0));
      send(producer, topics.profileTimings(), "t2", timing("demo-mlp", "1", "host-a", "cpu", 2, 6.0));
      send(producer, topics.profileTimings(), "t4", timing("demo-mlp", "1", "host-a", "cpu", 4, 4.0));
      send(producer, topics.profileTimings(), "u1", timing("demo-mlp", "2", "host-a", "cpu", 1, 12.0));
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> Committed.readAll(topics.planAssignments()).size() >= 4);
  }

  @Test
  void shouldRestoreItsTablesFromChangelogsAfterARestartAndEmitOnlyWhatChanged() throws Exception {
    String prefix = KafkaFixture.uniquePrefix("planner");
    Topics topics = new Topics(prefix);
    String app = prefix + "-planner";
    long timingsBefore;
    try (PlannerService first = new PlannerService(config(prefix, app, dir.resolve("state-1")))) {
      first.start();
      recordDemoHistory(topics, dir.resolve("repo"));
      timingsBefore = first.storeEntries(InputKind.TIMINGS.store());
    }
    List<ConsumerRecord<String, byte[]>> before = Committed.readAll(planTopics(topics));
    assertThat(timingsBefore).isEqualTo(4);

    try (PlannerService second = new PlannerService(config(prefix, app, dir.resolve("state-2")))) {
      second.start();
      assertThat(second.restoredRecords()).as("records restored from changelogs").isPositive();
      assertThat(second.storeEntries(InputKind.TIMINGS.store())).isEqualTo(timingsBefore);

      TimingEvent faster = TimingEvent.newBuilder(timing("demo-mlp", "1", "host-a", "cpu", 4, 1.0)).setTimestamp(5000).build();
      try (KafkaProducer<String, byte[]> producer = KafkaFixture.producer()) {
        send(producer, topics.profileTimings(), "t4", faster);
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> Committed.readAll(topics.planPartitions()).stream()
          .anyMatch(r -> r.value() != null && decode(PartitionPlan.class, topics.planPartitions(), r.value()).getSizes().equals(List.of(4))));
    }
    List<ConsumerRecord<String, byte[]>> after = Committed.readAll(planTopics(topics));

    Map<String, byte[]> last = new HashMap<>();
    before.forEach(r -> last.put(r.topic() + "|" + r.key(), r.value()));
    Map<String, Long> seen = new HashMap<>();
    before.forEach(r -> seen.merge(r.topic() + "-" + r.partition(), r.offset(), Math::max));
    List<ConsumerRecord<String, byte[]>> added = after.stream()
        .filter(r -> r.offset() > seen.getOrDefault(r.topic() + "-" + r.partition(), -1L))
        .sorted(java.util.Comparator.comparing((ConsumerRecord<String, byte[]> r) -> r.topic()).thenComparing(ConsumerRecord::offset))
        .toList();
    assertThat(added).as("records emitted after the restart").isNotEmpty();
    for (ConsumerRecord<String, byte[]> r : added) {
      assertThat(Arrays.equals(last.get(r.topic() + "|" + r.key()), r.value()))
          .as("%s %s re-emitted unchanged after the restart", r.topic(), r.key()).isFalse();
      last.put(r.topic() + "|" + r.key(), r.value());
    }
    assertThat(added.stream().filter(r -> r.topic().equals(topics.planPartitions())).map(ConsumerRecord::key))
        .containsExactly("demo-mlp/1/host-a/cpu");
  }

  static <T extends SpecificRecord> T decode(Class<T> type, String topic, byte[] bytes) {
    return CODECS.codec(type).decode(topic, bytes);
  }
}

package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.common.kafka.RequestTopics;
import io.partita.testkit.KafkaFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The planner grows a base model's request topic to the slots its plan gives it, and names no topic per service model. */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class RequestTopicGrowerIT {
  @TempDir Path dir;

  @Test
  void shouldGrowTheBaseModelsRequestTopicToItsPlannedSlots() throws Exception {
    String prefix = KafkaFixture.uniquePrefix("grow");
    Topics topics = new Topics(prefix);
    PlannerConfig config = PlannerConfig.from(Settings.of(Map.of(
        "kafka.bootstrap.servers", KafkaFixture.bootstrapServers(),
        "topic.prefix", prefix,
        "planner.application.id", prefix + "-planner",
        "planner.state.dir", dir.resolve("state").toString(),
        "planner.debounce.ms", "100",
        "planner.replication.factor", "1",
        "topics.replication", "1",
        "topic.requests.partitions", "1")));
    try (PlannerService planner = new PlannerService(config)) {
      planner.start();
      PlannerServiceIT.recordDemoHistory(topics, dir.resolve("repo"));
      Set<String> slots = new HashSet<>();
      for (var r : Committed.readAll(topics.planAssignments())) {
        if (r.value() != null) {
          SlotAssignment a = PlannerServiceIT.CODECS.codec(SlotAssignment.class).decode(r.topic(), r.value());
          if (a.getModel().equals("demo-mlp")) {
            slots.add(a.getHost() + "/" + a.getSlot());
          }
        }
      }
      assertThat(slots).hasSizeGreaterThan(1);
      String topic = topics.requests("demo-mlp");
      try (Admin admin = KafkaFixture.admin()) {
        await().atMost(Duration.ofSeconds(60)).until(() -> admin.listTopics().names().get().contains(topic)
            && admin.describeTopics(Set.of(topic)).allTopicNames().get().get(topic).partitions().size()
                == slots.size() * RequestTopics.PARTITIONS_PER_SLOT);
        // four service models (demo, demo-a, demo-b, demo-c), one request topic
        assertThat(admin.listTopics().names().get()).filteredOn(t -> t.startsWith(prefix + ".requests.")).containsExactly(topic);
      }
    }
  }
}

package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.avro.PartitionPlan;
import io.partita.common.Topics;
import io.partita.planner.replay.Inventory;
import io.partita.planner.replay.Replay;
import io.partita.planner.stream.PlanTable;
import io.partita.testkit.KafkaFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Replay over the recorded topics of a live planner: the same plan, and what-if inventories. */
@Tag("slow")
@ExtendWith(KafkaFixture.class)
class ReplayIT {
  @TempDir static Path dir;
  static Topics topics;
  static PlannerConfig config;
  static PlannerService planner;

  @BeforeAll
  static void recordHistory() throws Exception {
    String prefix = KafkaFixture.uniquePrefix("replay");
    topics = new Topics(prefix);
    config = PlannerServiceIT.config(prefix, prefix + "-planner", dir.resolve("state"));
    planner = new PlannerService(config);
    planner.start();
    PlannerServiceIT.recordDemoHistory(topics, dir.resolve("repo"));
  }

  @AfterAll
  static void stopPlanner() {
    if (planner != null) {
      planner.close();
    }
  }

  static Properties kafka() {
    Properties p = new Properties();
    p.put("bootstrap.servers", KafkaFixture.bootstrapServers());
    return p;
  }

  @Test
  void shouldReproduceTheLivePlanByteForByteWhenReplayingTheFullHistory() throws Exception {
    AtomicReference<Replay.Result> last = new AtomicReference<>();
    Path state = Files.createDirectories(dir.resolve("replay-full"));
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
      Replay.Result result = Replay.run(kafka(), config.plan(), config.codecs(), 0, Long.MAX_VALUE, null, Files.createTempDirectory(state, "run"));
      last.set(result);
      assertThat(Replay.toJson(result.diff(), result.replayed(), result.live(), topics, config.codecs()).get("identical").asBoolean())
          .as(Replay.pretty(Replay.toJson(result.diff(), result.replayed(), result.live(), topics, config.codecs()))).isTrue();
    });
    for (PlanTable table : PlanTable.values()) {
      assertThat(last.get().replayed().get(table)).as(table.id()).isNotEmpty();
    }
    assertThat(last.get().replayed().get(PlanTable.PARTITIONS)).containsOnlyKeys("demo-mlp/1/host-a/cpu");
  }

  @Test
  void shouldPlanTheExtraHostOfAWhatIfInventoryLikeTheHostItCopies() throws Exception {
    Path yaml = dir.resolve("hosts.yaml");
    Files.writeString(yaml, "hosts:\n  - id: host-b\n    like: host-a\n    cores: 2\n");
    Replay.Result result = Replay.run(kafka(), config.plan(), config.codecs(), 0, Long.MAX_VALUE, Inventory.read(yaml),
        Files.createDirectories(dir.resolve("replay-what-if")));

    assertThat(result.diff().added().get(PlanTable.PARTITIONS)).containsExactly("demo-mlp/1/host-b/cpu");
    assertThat(result.diff().added().get(PlanTable.VERSIONS)).containsExactly("demo-mlp/host-b");
    assertThat(result.diff().added().get(PlanTable.ASSIGNMENTS)).containsExactly("host-b/cpu-0", "host-b/cpu-1");
    assertThat(result.diff().changed().get(PlanTable.PARTITIONS)).isEmpty();
    PartitionPlan hostB = io.partita.common.serde.Codecs.singleObject().codec(PartitionPlan.class)
        .decode(topics.planPartitions(), result.replayed().get(PlanTable.PARTITIONS).get("demo-mlp/1/host-b/cpu"));
    assertThat(hostB.getPoolSize()).isEqualTo(2);
    assertThat(hostB.getSizes()).containsExactly(1, 1);
  }
}

package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.PartitionPlan;
import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.Inventory;
import io.partita.planner.replay.Recorded;
import io.partita.planner.replay.Replay;
import io.partita.planner.stream.PlanTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What-if inventories applied to recorded input, planned by the same topology (no broker). */
class WhatIfInventoryTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private final Topics topics = new Topics("w");
  private final PlanSettings settings = PlanSettings.defaults(topics);
  @TempDir Path dir;
  private final List<Recorded> history = new ArrayList<>();

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void record(String topic, String key, T value) {
    history.add(new Recorded(topic, 0, history.size(), history.size(), key,
        CODECS.codec((Class<T>) value.getClass()).encode(topic, value)));
  }

  /** A model measured on host-x's single GPU (sizes 1 and 2 were measured on a lab host's pool). */
  private void gpuHistory() {
    record(topics.catalogModels(), "det/1", version("det", "1", "CUDA"));
    record(topics.catalogServices(), "det", serviceModel("det", "det", 2));
    record(topics.hostEnvironments(), "host-x", host("host-x", 4, 1));
    record(topics.profileTimings(), "a", timing("det", "1", "host-x", "gpu", 1, 4.0));
    record(topics.profileTimings(), "b", timing("det", "1", "host-x", "gpu", 2, 1.5));
  }

  private Inventory inventory(String yaml) throws Exception {
    Path file = dir.resolve("hosts.yaml");
    Files.writeString(file, yaml);
    return Inventory.read(file);
  }

  private Map<PlanTable, SortedMap<String, byte[]>> plan(List<Recorded> records, String name) throws Exception {
    return Replay.plan(records, settings, CODECS, Files.createDirectories(dir.resolve(name)));
  }

  private static <T extends SpecificRecord> T decode(Class<T> type, byte[] bytes) {
    return CODECS.codec(type).decode("w", bytes);
  }

  @Test
  void shouldPlanAHostWithTwoGpusLikeHostXWithItsTimings() throws Exception {
    gpuHistory();
    Map<PlanTable, SortedMap<String, byte[]>> before = plan(history, "before");
    Inventory twoGpus = inventory("hosts:\n  - id: host-y\n    like: host-x\n    gpus: 2\n");
    Map<PlanTable, SortedMap<String, byte[]>> after = plan(twoGpus.apply(history, topics, CODECS), "after");

    assertThat(decode(PartitionPlan.class, before.get(PlanTable.PARTITIONS).get("det/1/host-x/gpu")).getSizes())
        .containsExactly(1);
    PartitionPlan y = decode(PartitionPlan.class, after.get(PlanTable.PARTITIONS).get("det/1/host-y/gpu"));
    assertThat(y.getPoolSize()).isEqualTo(2);
    assertThat(y.getSizes()).as("2 x 1000/4 = 500/s < 1000/1.5 = 667/s").containsExactly(2);
    assertThat(Replay.diff(after, before).changed().get(PlanTable.PARTITIONS)).isEmpty();
    SlotAssignment slot = decode(SlotAssignment.class, after.get(PlanTable.ASSIGNMENTS).get("host-y/gpu-0"));
    assertThat(slot.getGpu()).isZero();
    // det's two instances spread over the two hosts: one of them on host-y
    assertThat(slot.getServiceModels()).extracting(s -> s.getInstanceId()).singleElement().isIn("det#0", "det#1");
  }

  @Test
  void shouldDropEverythingOfARemovedHost() throws Exception {
    gpuHistory();
    record(topics.hostEnvironments(), "host-z", host("host-z", 2, 1));
    record(topics.profileTimings(), "c", timing("det", "1", "host-z", "gpu", 1, 4.0));
    Inventory removeX = inventory("hosts:\n  - id: host-x\n    remove: true\n");
    Map<PlanTable, SortedMap<String, byte[]>> plan = plan(removeX.apply(history, topics, CODECS), "removed");

    assertThat(plan.get(PlanTable.PARTITIONS)).containsOnlyKeys("det/1/host-z/gpu");
    assertThat(plan.get(PlanTable.VERSIONS)).containsOnlyKeys("det/host-z");
  }

  @Test
  void shouldChangeARecordedHostsCores() throws Exception {
    record(topics.catalogModels(), "rec/1", version("rec", "1", "CPU"));
    record(topics.hostEnvironments(), "host-a", host("host-a", 4, 0));
    record(topics.profileTimings(), "a", timing("rec", "1", "host-a", "cpu", 1, 10.0));
    Inventory eight = inventory("hosts:\n  - id: host-a\n    cores: 8\n");
    Map<PlanTable, SortedMap<String, byte[]>> plan = plan(eight.apply(history, topics, CODECS), "eight");

    assertThat(decode(PartitionPlan.class, plan.get(PlanTable.PARTITIONS).get("rec/1/host-a/cpu")).getSizes())
        .hasSize(8);
  }

  @Test
  void shouldNameTheFieldOfAnUnknownSourceHost() throws Exception {
    gpuHistory();
    Inventory ghost = inventory("hosts:\n  - id: host-y\n    like: host-ghost\n");
    assertThatThrownBy(() -> ghost.apply(history, topics, CODECS)).hasMessageContaining("hosts[0].like")
        .hasMessageContaining("host-ghost").hasMessageContaining("host-x");
    assertThatThrownBy(() -> inventory("hosts:\n  - like: host-x\n")).hasMessageContaining("hosts[0].id: missing");
    assertThatThrownBy(() -> inventory("hosts:\n  - id: a\n    colour: red\n")).hasMessageContaining("colour");
  }

  @Test
  void shouldSplitAPoolBetweenModelsInProportionToTheirDemand() throws Exception {
    record(topics.catalogModels(), "a/1", version("a", "1", "CPU"));
    record(topics.catalogModels(), "b/1", version("b", "1", "CPU"));
    record(topics.catalogServices(), "a", serviceModel("a", "a", 1));
    record(topics.catalogServices(), "b", serviceModel("b", "b", 1));
    record(topics.hostEnvironments(), "host-a", host("host-a", 8, 0));
    for (String m : List.of("a", "b")) {
      record(topics.profileTimings(), m + "1", timing(m, "1", "host-a", "cpu", 1, 10.0));
      record(topics.profileTimings(), m + "2", timing(m, "1", "host-a", "cpu", 2, 6.0));
    }
    record(topics.demand(), "a", new io.partita.avro.Demand("a", 300.0, 0L, 0L));
    record(topics.demand(), "b", new io.partita.avro.Demand("b", 100.0, 0L, 0L));
    Map<PlanTable, SortedMap<String, byte[]>> plan = plan(history, "demand");

    io.partita.planning.grouping.PoolSplitPlan expected = io.partita.planning.grouping.PoolSplitter.split(
        new io.partita.planning.grouping.PoolSplitProblem(8, 64 * TestRecords.GIB, 0, Long.MAX_VALUE,
            io.partita.planning.grouping.GroupingObjective.THROUGHPUT, List.of(
                new io.partita.planning.grouping.ModelDemand("a", 300.0, 1, List.of(
                    new io.partita.planning.ProfilePoint(1, 10.0, 1 << 20), new io.partita.planning.ProfilePoint(2, 6.0, 1 << 20)), null),
                new io.partita.planning.grouping.ModelDemand("b", 100.0, 1, List.of(
                    new io.partita.planning.ProfilePoint(1, 10.0, 1 << 20), new io.partita.planning.ProfilePoint(2, 6.0, 1 << 20)), null))));
    PartitionPlan a = decode(PartitionPlan.class, plan.get(PlanTable.PARTITIONS).get("a/1/host-a/cpu"));
    PartitionPlan b = decode(PartitionPlan.class, plan.get(PlanTable.PARTITIONS).get("b/1/host-a/cpu"));
    assertThat(a.getShareResources()).isEqualTo(expected.shares().get(0).resources()).isEqualTo(6);
    assertThat(b.getShareResources()).isEqualTo(expected.shares().get(1).resources()).isEqualTo(2);
    assertThat(a.getSizes()).isEqualTo(expected.shares().get(0).plan().choice().sizes());
    assertThat(a.getUnmetRequestsPerSecond()).isEqualTo(expected.shares().get(0).unmetRequestsPerSecond());
    assertThat(plan.get(PlanTable.ASSIGNMENTS)).hasSize(8);
  }
}

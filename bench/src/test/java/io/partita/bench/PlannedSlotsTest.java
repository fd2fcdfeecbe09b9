package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.MountStatus;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlannedSlotsTest {
  private static SlotAssignment slot(String name, List<Integer> cpus, int maxBatch) {
    return SlotAssignment.newBuilder().setHost("bench").setSlot(name).setModel("demo-mlp").setVersion("1").setPool("cpu")
        .setCpus(cpus).setGpu(-1).setProvider("CPU").setThreads(cpus.size()).setMaxBatch(maxBatch).setMemoryBudgetBytes(0)
        .setServiceModels(List.of()).setPlanId(null).setTimestamp(0).build();
  }

  private static SlotStatus running(SlotAssignment a, String health) {
    return SlotStatus.newBuilder().setHost(a.getHost()).setSlot(a.getSlot()).setModel(a.getModel()).setVersion(a.getVersion())
        .setPool(a.getPool()).setProvider(a.getProvider()).setCpus(a.getCpus()).setGpu(a.getGpu()).setThreads(a.getThreads())
        .setHealth(health).setMaxBatch(a.getMaxBatch()).setMemoryBudgetBytes(0).setServiceModels(List.of()).setTimestamp(1).build();
  }

  private static PlannerRealityBench.Outcome loop(List<SlotAssignment> assignments, String error) {
    return new PlannerRealityBench.Outcome("demo-mlp", 8, 2, List.of(), 1, 1, 1, List.of(2), List.of(1, 1), "two beat one",
        assignments, error);
  }

  @Test
  void shouldLabelTheRowsWithThePlansSlotsAndBatch() {
    PlannedSlots planned = PlannedSlots.of(loop(List.of(slot("cpu-0", List.of(0), 8), slot("cpu-1", List.of(1), 8)), null));

    assertThat(planned.sizes()).containsExactly(1, 1);
    assertThat(planned.batch()).isEqualTo(8);
    assertThat(planned.label()).isEqualTo("planned: 2 slots [1, 1] pinned, up to 8");
    assertThat(planned.describe()).isEqualTo("cpu-0 on CPUs [0] (0 instances), cpu-1 on CPUs [1] (0 instances), batches up to 8");
    assertThat(planned.why()).isEqualTo("two beat one");
  }

  @Test
  void shouldHaveNoSlotsAndSayWhyWhenTheLoopFailedOrAssignedNone() {
    assertThat(PlannedSlots.of(loop(List.of(), "no measured point")).isEmpty()).isTrue();
    assertThat(PlannedSlots.of(loop(List.of(), "no measured point")).why()).isEqualTo("no measured point");
    assertThat(PlannedSlots.of(loop(List.of(), null)).why()).contains("assigned no slot to host bench");
  }

  @Test
  void shouldCountTheWorkerAsFollowingOnlyWhenItRunsExactlyThePlannedSlotsReady() {
    SlotAssignment a = slot("cpu-0", List.of(0), 8);
    SlotAssignment b = slot("cpu-1", List.of(1), 8);
    List<SlotAssignment> plan = List.of(a, b);

    assertThat(PipelineEnv.matches(plan, List.of(running(a, "READY"), running(b, "READY")))).isTrue();
    assertThat(PipelineEnv.matches(plan, List.of(running(a, "READY"), running(b, "STARTING")))).as("not ready").isFalse();
    assertThat(PipelineEnv.matches(plan, List.of(running(a, "READY")))).as("a slot missing").isFalse();
    assertThat(PipelineEnv.matches(plan, List.of(running(a, "READY"), running(b, "READY"), running(slot("demo-mlp-1", List.of(), 1), "READY"))))
        .as("the start-up slot still open").isFalse();
    assertThat(PipelineEnv.matches(plan, List.of(running(a, "READY"), running(slot("cpu-1", List.of(0), 8), "READY"))))
        .as("other CPUs").isFalse();
    assertThat(PipelineEnv.matches(plan, List.of(running(a, "READY"), running(slot("cpu-1", List.of(1), 1), "READY"))))
        .as("another batch").isFalse();
  }

  @Test
  void shouldWaitForTheAssignedInstancesToBeMounted() {
    SlotAssignment a = SlotAssignment.newBuilder(slot("cpu-0", List.of(0), 8)).setServiceModels(List.of(
        AssignedServiceModel.newBuilder().setServiceModel("demo-mlp").setInstanceId("demo-mlp#0").setWeightFile(null).build())).build();
    SlotStatus opened = running(a, "READY");

    assertThat(PipelineEnv.matches(List.of(a), List.of(opened))).as("nothing mounted yet").isFalse();
    assertThat(PipelineEnv.matches(List.of(a), List.of(withMount(opened, "NOT_READY")))).as("mount not ready").isFalse();
    assertThat(PipelineEnv.matches(List.of(a), List.of(withMount(opened, "READY")))).isTrue();
  }

  private static SlotStatus withMount(SlotStatus s, String state) {
    return SlotStatus.newBuilder(s).setServiceModels(List.of(MountStatus.newBuilder().setServiceModel("demo-mlp")
        .setInstanceId("demo-mlp#0").setWeightFile(null).setSha256(null).setState(state).setReason(null).build())).build();
  }
}

package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestPartitionCountsTest {
  private final Topics topics = new Topics("p");

  private static SlotAssignment slot(String host, String slot, String model, int serviceModels) {
    List<AssignedServiceModel> list = new ArrayList<>();
    for (int i = 0; i < serviceModels; i++) {
      list.add(AssignedServiceModel.newBuilder().setServiceModel(model + "-" + i).setInstanceId(model + "-" + i + "#0").build());
    }
    return SlotAssignment.newBuilder().setHost(host).setSlot(slot).setModel(model).setVersion("1").setPool("cpu")
        .setServiceModels(list).build();
  }

  @Test
  void shouldGiveEachBaseModelFourPartitionsPerPlannedSlotAtLeastTheMinimum() {
    List<SlotAssignment> plan = new ArrayList<>();
    for (int h = 0; h < 3; h++) {
      for (int s = 0; s < 2; s++) {
        plan.add(slot("host-" + h, "cpu-" + s, "big", 1));
      }
    }
    plan.add(slot("host-0", "cpu-9", "small", 1));
    assertThat(RequestPartitionCounts.of(plan, topics, 4))
        .containsEntry("p.requests.big", 24).containsEntry("p.requests.small", 4).hasSize(2);
  }

  @Test
  void shouldNotGrowWithTheNumberOfServiceModels() {
    List<SlotAssignment> few = List.of(slot("h", "cpu-0", "base", 1), slot("h", "cpu-1", "base", 1));
    List<SlotAssignment> thousands = List.of(slot("h", "cpu-0", "base", 5_000), slot("h", "cpu-1", "base", 5_000));
    assertThat(RequestPartitionCounts.of(thousands, topics, 1)).isEqualTo(RequestPartitionCounts.of(few, topics, 1))
        .containsExactlyEntriesOf(java.util.Map.of("p.requests.base", 8));
  }
}

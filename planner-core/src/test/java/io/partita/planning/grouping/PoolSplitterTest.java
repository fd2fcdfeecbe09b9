package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.planning.ProfilePoint;
import java.util.List;
import org.junit.jupiter.api.Test;

class PoolSplitterTest {

  private static final List<ProfilePoint> PROFILE =
      List.of(new ProfilePoint(1, 10, 0), new ProfilePoint(2, 6, 0), new ProfilePoint(4, 4, 0));

  @Test
  void shouldSplitInProportionToDemandWithLargestRemainders() {
    // Demands 50 : 30 : 20 of 10 resources: exact shares 5, 3, 2.
    // Demands 1 : 1 : 1 of 10: 3.33 each, the leftover 1 goes to the smallest id on equal remainders.
    PoolSplitPlan proportional = PoolSplitter.split(new PoolSplitProblem(10, 1000, 0, 0,
        GroupingObjective.THROUGHPUT, List.of(new ModelDemand("c", 20, 1, PROFILE, null),
            new ModelDemand("a", 50, 1, PROFILE, null), new ModelDemand("b", 30, 1, PROFILE, null))));
    PoolSplitPlan even = PoolSplitter.split(new PoolSplitProblem(10, 1000, 0, 0, GroupingObjective.THROUGHPUT,
        List.of(new ModelDemand("a", 1, 1, PROFILE, null), new ModelDemand("b", 1, 1, PROFILE, null),
            new ModelDemand("c", 1, 1, PROFILE, null))));

    assertThat(proportional.shares()).extracting(ModelShare::modelId, ModelShare::resources)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("a", 5), org.assertj.core.groups.Tuple.tuple("b", 3),
            org.assertj.core.groups.Tuple.tuple("c", 2));
    assertThat(proportional.shares().get(0).memoryBytes()).isEqualTo(500);
    assertThat(even.shares()).extracting(ModelShare::resources).containsExactly(4, 3, 3);
  }

  @Test
  void shouldReportDemandThatCannotBeMet() {
    // Four singles give 400/s; the model wants 450/s.
    PoolSplitPlan plan = PoolSplitter.split(new PoolSplitProblem(4, 1000, 0, 0, GroupingObjective.THROUGHPUT,
        List.of(new ModelDemand("m", 450, 1, PROFILE, null))));

    ModelShare share = plan.shares().get(0);
    assertThat(share.plan().choice().sizes()).containsExactly(1, 1, 1, 1);
    assertThat(share.unmetRequestsPerSecond()).isCloseTo(50.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(plan.fullyServed()).isFalse();
  }

  @Test
  void shouldGiveNothingToAModelWithoutDemandAndSaySo() {
    PoolSplitPlan plan = PoolSplitter.split(new PoolSplitProblem(4, 1000, 0, 0, GroupingObjective.THROUGHPUT,
        List.of(new ModelDemand("busy", 10, 1, PROFILE, null), new ModelDemand("idle", 0, 1, PROFILE, null))));

    assertThat(plan.shares().get(0).resources()).isEqualTo(4);
    assertThat(plan.shares().get(1).resources()).isZero();
    assertThat(plan.shares().get(1).plan().noEligibleReason()).contains("share of the pool is 0 resources");
    assertThat(plan.fullyServed()).isTrue();
  }
}

package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.planning.ProfilePoint;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Grouping at the edges of its inputs: memory sums near 2^63, pools past the bound, memory ties. */
class GroupingLimitsTest {

  private static GroupingProblem problem(int n, long poolMemory, List<ProfilePoint> profile, long buffer, long threshold) {
    return new GroupingProblem("m", n, poolMemory, 1, profile, buffer, threshold, null, GroupingObjective.THROUGHPUT);
  }

  @Test
  void shouldNeverLetTheMemorySumOfPartitionsWrapAround() {
    // Four partitions of 2^62 B would sum to 2^64, which wraps to 0 in a long: only one fits.
    GroupingProblem p = problem(4, Long.MAX_VALUE, List.of(new ProfilePoint(1, 10, 1L << 62)), 0, Long.MAX_VALUE);

    GroupingPlan plan = GroupingPlanner.plan(p);

    assertThat(plan.choice().sizes()).containsExactly(1);
    assertThat(plan.choice().memoryBytes()).isEqualTo(1L << 62);
    assertThat(GroupingPlanner.isEligible(p, plan.choice())).isTrue();
  }

  @Test
  void shouldRefuseToBuildAGroupingWhoseMemoryExceedsSixtyFourBits() {
    GroupingProblem p = problem(4, Long.MAX_VALUE, List.of(new ProfilePoint(1, 10, 1L << 62)), 0, Long.MAX_VALUE);

    assertThatThrownBy(() -> GroupingPlanner.toGrouping(p, List.of(1, 1, 1, 1))).isInstanceOf(ArithmeticException.class);
  }

  @Test
  void shouldAnswerNoPlanForAPoolBeyondTheBoundInsteadOfRunningOutOfMemory() {
    GroupingPlan plan = GroupingPlanner.plan(problem(Integer.MAX_VALUE, Long.MAX_VALUE,
        List.of(new ProfilePoint(1, 10, 0)), 0, Long.MAX_VALUE));

    assertThat(plan.planned()).isFalse();
    assertThat(plan.noEligibleReason()).contains("exceeds the planner's bound of " + GroupingProblem.MAX_POOL_SIZE);
  }

  @Test
  void shouldBreakTiesByTheSizeListNotByMemoryWhenMemoryBinds() {
    // T(1) = T(2) = T(3) = 8 ms, N = 4, P = 2: {3,1} and {2,2} both give 250/s on 2 partitions of
    // 4 resources. The plan order (docs/concepts.md) breaks the tie by the larger size list, {3,1}, whether
    // or not memory can bind; memory only decides eligibility: with 2 B, {3,1} (3 B) no longer fits.
    List<ProfilePoint> profile = List.of(new ProfilePoint(1, 8, 2), new ProfilePoint(2, 8, 0), new ProfilePoint(3, 8, 1));

    GroupingPlan unlimited = GroupingPlanner.plan(problem(4, Long.MAX_VALUE, profile, 1, 2));
    GroupingPlan fits = GroupingPlanner.plan(problem(4, 3, profile, 1, 2));
    GroupingPlan tight = GroupingPlanner.plan(problem(4, 2, profile, 1, 2));

    assertThat(unlimited.method()).isEqualTo("dp-2d");
    assertThat(unlimited.choice().sizes()).containsExactly(3, 1);
    assertThat(fits.method()).isEqualTo("dp-memory-pareto");
    assertThat(fits.choice().sizes()).containsExactly(3, 1);
    assertThat(tight.method()).isEqualTo("dp-memory-pareto");
    assertThat(tight.choice().sizes()).containsExactly(2, 2);
    assertThat(tight.choice().memoryBytes()).isZero();
  }
}

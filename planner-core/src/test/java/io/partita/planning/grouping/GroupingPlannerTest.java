package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class GroupingPlannerTest {

  private static final long GIB = 1L << 30;

  /** The worked example: N = 4, T(1) = 10 ms, T(2) = 6 ms, T(4) = 4 ms, b = 1. */
  private static GroupingProblem worked(long buffer, long threshold, GroupingObjective objective) {
    return new GroupingProblem("m", 4, 16 * GIB, 1,
        List.of(new ProfilePoint(1, 10, GIB), new ProfilePoint(2, 6, GIB), new ProfilePoint(4, 4, GIB)),
        buffer, threshold, null, objective);
  }

  @Test
  void shouldChooseFourSinglesForThroughputInTheWorkedExample() {
    GroupingPlan plan = GroupingPlanner.plan(worked(0, 0, GroupingObjective.THROUGHPUT));

    assertThat(plan.choice().sizes()).containsExactly(1, 1, 1, 1);
    assertThat(plan.choice().throughputPerSecond()).isCloseTo(400.0, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(plan.runnersUp()).extracting(Grouping::sizes)
        .containsExactly(List.of(2, 2), List.of(4));
    assertThat(plan.noEligibleReason()).isNull();
  }

  /**
   * Found by GroupingPropertiesTest in CI: sizes 2, 4 and 8 at 5 ms each, memory binding. Several
   * six-partition groupings of 22 tie at 1,200/s; the plan order takes the largest size list, and
   * the memory program used to drop [8, ...] partial groupings for tied ones needing less memory.
   */
  @Test
  void shouldKeepTheTieBreakWhenMemoryBindsAndThroughputsTie() {
    GroupingProblem problem = new GroupingProblem("m", 22, 19, 1,
        List.of(new ProfilePoint(2, 5.0, 2), new ProfilePoint(4, 5.0, 1), new ProfilePoint(5, 9.21914524461039, 3),
            new ProfilePoint(7, 25.28559481724556, 2), new ProfilePoint(8, 5.0, 4),
            new ProfilePoint(9, 19.59855227031382, 3), new ProfilePoint(13, 14.0, 2)),
        2, 13, null, GroupingObjective.THROUGHPUT);

    GroupingPlan plan = GroupingPlanner.plan(problem);

    assertThat(plan.method()).isEqualTo("dp-memory-pareto");
    assertThat(plan.choice().sizes()).containsExactly(8, 4, 4, 2, 2, 2);
    assertThat(plan.choice().sizes()).isEqualTo(GroupingOracle.best(problem).sizes());
  }

  @Test
  void shouldChooseTwoPairsWhenTheBufferThresholdAllowsTwoPartitions() {
    GroupingPlan plan = GroupingPlanner.plan(worked(10, 25, GroupingObjective.THROUGHPUT));

    assertThat(plan.maxPartitions()).isEqualTo(2);
    assertThat(plan.choice().sizes()).containsExactly(2, 2);
    assertThat(plan.choice().throughputPerSecond()).isCloseTo(1000.0 / 3, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(plan.method()).isEqualTo("dp-2d");
  }

  @Test
  void shouldChooseTheWholePoolForTheLatencyObjective() {
    GroupingPlan plan = GroupingPlanner.plan(worked(0, 0, GroupingObjective.LATENCY));

    assertThat(plan.choice().sizes()).containsExactly(4);
    assertThat(plan.choice().maxLatencyMs()).isEqualTo(4.0);
  }

  @Test
  void shouldPreferFewerPartitionsOnEqualThroughput() {
    // {2} and {1,1} both give 200/s: fewer partitions wins.
    GroupingProblem p = new GroupingProblem("m", 2, GIB, 1,
        List.of(new ProfilePoint(1, 10, 0), new ProfilePoint(2, 5, 0)), 0, 0, null,
        GroupingObjective.THROUGHPUT);

    assertThat(GroupingPlanner.plan(p).choice().sizes()).containsExactly(2);
  }

  @Test
  void shouldPreferTheLexicographicallyLargerListOnEqualThroughputAndPartitions() {
    // Every size takes 8 ms, at most 2 partitions: {3,1}, {2,2}, {2,1}, {1,1} all give 250/s.
    GroupingProblem p = new GroupingProblem("m", 4, GIB, 1,
        List.of(new ProfilePoint(1, 8, 0), new ProfilePoint(2, 8, 0), new ProfilePoint(3, 8, 0)),
        1, 2, null, GroupingObjective.THROUGHPUT);

    assertThat(GroupingPlanner.plan(p).choice().sizes()).containsExactly(3, 1);
  }

  @Test
  void shouldRespectPoolMemory() {
    // Singles are fastest, but every instance needs 1 GiB and the pool has 2 GiB.
    GroupingProblem p = new GroupingProblem("m", 4, 2 * GIB, 1,
        List.of(new ProfilePoint(1, 10, GIB), new ProfilePoint(2, 6, GIB), new ProfilePoint(4, 4, GIB)),
        0, 0, null, GroupingObjective.THROUGHPUT);

    GroupingPlan plan = GroupingPlanner.plan(p);

    assertThat(plan.choice().sizes()).containsExactly(2, 2);
    assertThat(plan.choice().memoryBytes()).isEqualTo(2 * GIB);
    assertThat(plan.method()).isEqualTo("dp-memory-pareto");
  }

  @Test
  void shouldDropSizesThatMissTheSloAndSayWhy() {
    GroupingProblem p = new GroupingProblem("m", 4, 16 * GIB, 1,
        List.of(new ProfilePoint(1, 10, GIB), new ProfilePoint(2, 6, GIB), new ProfilePoint(4, 4, GIB)),
        0, 0, 7.0, GroupingObjective.THROUGHPUT);

    GroupingPlan plan = GroupingPlanner.plan(p);

    assertThat(plan.choice().sizes()).containsExactly(2, 2);
    assertThat(plan.excludedSizes()).singleElement().satisfies(e -> {
      assertThat(e.size()).isEqualTo(1);
      assertThat(e.reason()).contains("exceeds the SLO");
    });
  }

  @Test
  void shouldReturnNoEligibleGroupingWithTheReasonInsteadOfThrowing() {
    GroupingProblem p = new GroupingProblem("m", 4, 16 * GIB, 1,
        List.of(new ProfilePoint(8, 3, GIB), new ProfilePoint(2, 50, GIB)), 0, 0, 20.0,
        GroupingObjective.THROUGHPUT);

    GroupingPlan plan = GroupingPlanner.plan(p);

    assertThat(plan.planned()).isFalse();
    assertThat(plan.choice()).isNull();
    assertThat(plan.noEligibleReason()).contains("size 2:").contains("SLO").contains("size 8:")
        .contains("larger than the pool");
  }

  @Test
  void shouldReturnNoEligibleGroupingWhenTheBufferAllowsNoPartition() {
    GroupingPlan plan = GroupingPlanner.plan(worked(100, 99, GroupingObjective.THROUGHPUT));

    assertThat(plan.planned()).isFalse();
    assertThat(plan.noEligibleReason()).contains("buffer threshold");
  }

  @Test
  void shouldPlanAPoolOf1024With64MeasuredSizesWithinMilliseconds() {
    GroupingProblem p = largeProblem(1024, 64, 0, 0, new Random(7));
    GroupingPlanner.plan(p); // warm up the JIT once
    long start = System.nanoTime();
    GroupingPlan plan = GroupingPlanner.plan(p);
    long micros = (System.nanoTime() - start) / 1000;

    assertThat(plan.planned()).isTrue();
    assertThat(plan.choice().resourcesUsed()).isLessThanOrEqualTo(1024);
    // Generous for a shared 2-core machine; the JMH figure is in docs/internals/planning.md.
    assertThat(micros).isLessThan(500_000);
  }

  /** Sizes 1..64 spread geometrically up to n, sublinear speed-up with noise. */
  static GroupingProblem largeProblem(int n, int count, long buffer, long threshold, Random random) {
    List<ProfilePoint> profile = new ArrayList<>();
    java.util.Set<Integer> used = new java.util.TreeSet<>();
    for (int i = 0; i < count; i++) {
      int k = Math.max(1, (int) Math.round(Math.pow(n, (double) i / (count - 1))));
      while (used.contains(k)) {
        k++;
      }
      used.add(k);
    }
    for (int k : used) {
      double t = 100.0 / Math.pow(k, 0.8) * (0.9 + 0.2 * random.nextDouble());
      profile.add(new ProfilePoint(k, t, 1_000_000L + 10_000L * k));
    }
    return new GroupingProblem("large", n, 1L << 40, 1, profile, buffer, threshold, null,
        GroupingObjective.THROUGHPUT);
  }
}

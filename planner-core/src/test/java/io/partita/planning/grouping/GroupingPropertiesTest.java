package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class GroupingPropertiesTest {

  /** A random small problem: sizes from 1..14 (some larger than N), integer times so ties happen. */
  static GroupingProblem randomProblem(long seed, int n) {
    Random r = new Random(seed);
    List<ProfilePoint> profile = new ArrayList<>();
    for (int k = 1; k <= 14; k++) {
      if (r.nextInt(100) < 45 || (k == 1 && r.nextBoolean())) {
        double t = r.nextBoolean() ? 1 + r.nextInt(20) : 1 + 30 * r.nextDouble();
        profile.add(new ProfilePoint(k, t, r.nextInt(5)));
      }
    }
    if (profile.isEmpty()) {
      profile.add(new ProfilePoint(1 + r.nextInt(4), 1 + r.nextInt(20), r.nextInt(5)));
    }
    long memory = r.nextInt(4) == 0 ? 1000 : r.nextInt(25);
    long buffer = r.nextInt(3) == 0 ? 0 : 1 + r.nextInt(3);
    long threshold = r.nextInt(14);
    Double slo = r.nextInt(3) == 0 ? (double) (1 + r.nextInt(25)) : null;
    GroupingObjective objective = r.nextInt(3) == 0 ? GroupingObjective.LATENCY : GroupingObjective.THROUGHPUT;
    return new GroupingProblem("m", n, memory, 1 + r.nextInt(4), profile, buffer, threshold, slo, objective);
  }

  @Property(tries = 200)
  void dynamicProgramEqualsBruteForce(@ForAll long seed, @ForAll @IntRange(min = 1, max = 12) int n) {
    GroupingProblem problem = randomProblem(seed, n);

    GroupingPlan plan = GroupingPlanner.plan(problem);
    Grouping oracle = GroupingOracle.best(problem);

    if (oracle == null) {
      assertThat(plan.planned()).isFalse();
      assertThat(plan.noEligibleReason()).isNotBlank();
    } else {
      assertThat(plan.choice()).isNotNull();
      assertThat(plan.choice().sizes()).isEqualTo(oracle.sizes());
      assertThat(GroupingPlanner.isEligible(problem, plan.choice())).isTrue();
    }
  }

  @Property(tries = 200)
  void shufflingTheProfileNeverChangesThePlan(@ForAll long seed, @ForAll @IntRange(min = 1, max = 40) int n) {
    GroupingProblem problem = randomProblem(seed, n);
    List<ProfilePoint> shuffled = new ArrayList<>(problem.profile());
    Collections.shuffle(shuffled, new Random(seed ^ 0x5DEECE66DL));
    GroupingProblem again = new GroupingProblem(problem.modelId(), n, problem.poolMemoryBytes(),
        problem.batchSize(), shuffled, problem.bufferBytesPerPartition(), problem.bufferThresholdBytes(),
        problem.sloMs(), problem.objective());

    assertThat(GroupingPlanner.plan(again)).isEqualTo(GroupingPlanner.plan(problem));
  }

  @Property(tries = 100)
  void dynamicProgramEqualsBruteForceOnSomewhatLargerPools(@ForAll long seed,
      @ForAll @IntRange(min = 13, max = 24) int n) {
    GroupingProblem problem = randomProblem(seed, n);

    GroupingPlan plan = GroupingPlanner.plan(problem);
    Grouping oracle = GroupingOracle.best(problem);

    assertThat(plan.planned()).isEqualTo(oracle != null);
    if (oracle != null) {
      assertThat(plan.choice().sizes()).isEqualTo(oracle.sizes());
    }
  }
}

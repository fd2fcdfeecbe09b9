package io.partita.planning.grouping;

import io.partita.planning.Hysteresis;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link Hysteresis} for a pool's grouping: the running sizes stay unless the fresh grouping is
 * better by more than the margin. Pure.
 */
public final class GroupingHysteresis {

  private GroupingHysteresis() {}

  /**
   * The grouping plan to run: {@code fresh}, unless the incumbent sizes are still measured and
   * eligible in {@code problem} and the fresh choice is not better than them by more than the
   * margin (throughput, or the largest latency under the latency objective); then the incumbent
   * grouping, with its figures on today's profile, is the choice.
   */
  public static GroupingPlan keepGrouping(GroupingProblem problem, GroupingPlan fresh, List<Integer> incumbent,
      double margin) {
    if (incumbent == null || incumbent.isEmpty() || !fresh.planned()) {
      return fresh;
    }
    Grouping current;
    try {
      current = GroupingPlanner.toGrouping(problem, incumbent);
    } catch (IllegalArgumentException notMeasured) {
      return fresh;
    }
    if (current.sizes().equals(fresh.choice().sizes()) || !GroupingPlanner.isEligible(problem, current)) {
      return fresh;
    }
    Grouping challenger = fresh.choice();
    boolean better = problem.objective() == GroupingObjective.LATENCY
        ? Hysteresis.replacesLower(current.maxLatencyMs(), challenger.maxLatencyMs(), margin)
        : Hysteresis.replacesHigher(current.throughputPerSecond(), challenger.throughputPerSecond(), margin);
    if (better) {
      return fresh;
    }
    List<Grouping> runnersUp = new ArrayList<>();
    runnersUp.add(challenger);
    fresh.runnersUp().stream().filter(g -> !g.sizes().equals(current.sizes())).limit(2).forEach(runnersUp::add);
    return new GroupingPlan(fresh.modelId(), fresh.objective(), current, runnersUp, fresh.excludedSizes(),
        fresh.maxPartitions(), null, "kept (hysteresis)");
  }
}

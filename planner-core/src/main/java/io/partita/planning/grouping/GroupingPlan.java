package io.partita.planning.grouping;

import java.util.List;

/**
 * The result of {@link GroupingPlanner#plan}: the chosen grouping or an explicit "no eligible
 * grouping" with the reason. Plain data, so that it can become a plan-topic value as it is.
 *
 * @param modelId echoed from the problem
 * @param objective echoed from the problem
 * @param choice the best eligible grouping, or {@code null} when there is none
 * @param runnersUp the best homogeneous groupings ({@code c} partitions of one size {@code k}, {@code c}
 *     as large as the constraints allow) other than the choice, best first, at most three
 * @param excludedSizes measured sizes that no eligible grouping can use, each with its reason
 * @param maxPartitions the most partitions the buffer threshold allows
 * @param noEligibleReason why there is no choice; {@code null} when there is one
 * @param method which exact method found the choice ({@code dp-1d}, {@code dp-2d} or
 *     {@code dp-memory-pareto}), for the record
 */
public record GroupingPlan(
    String modelId,
    GroupingObjective objective,
    Grouping choice,
    List<Grouping> runnersUp,
    List<SizeExclusion> excludedSizes,
    int maxPartitions,
    String noEligibleReason,
    String method) {

  public GroupingPlan {
    runnersUp = List.copyOf(runnersUp);
    excludedSizes = List.copyOf(excludedSizes);
  }

  public boolean planned() {
    return choice != null;
  }
}

package io.partita.planning.mapping;

import java.util.List;

/**
 * The exact optimum of a mapping problem, when it is small enough.
 *
 * @param computed whether it was computed
 * @param reason why not, when not
 * @param assignments the optimal mapping (all services), empty when not computed
 * @param costMsPerSecond its bottleneck load; 0 when not computed
 * @param pipelineLatencyMs its summed pipeline latency
 * @param nodesExplored branch-and-bound nodes visited
 * @param gap the heuristic plan's cost divided by this cost ({@code >= 1}); {@code null} when not
 *     computed or not yet compared
 */
public record ExactMapping(
    boolean computed,
    String reason,
    List<Assignment> assignments,
    double costMsPerSecond,
    double pipelineLatencyMs,
    long nodesExplored,
    Double gap) {
  public ExactMapping {
    assignments = List.copyOf(assignments);
  }

  ExactMapping withGap(Double g) {
    return new ExactMapping(computed, reason, assignments, costMsPerSecond, pipelineLatencyMs,
        nodesExplored, g);
  }
}

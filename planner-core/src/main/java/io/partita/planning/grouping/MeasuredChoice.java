package io.partita.planning.grouping;

import java.util.List;

/**
 * The grouping of one share chosen by {@link MeasuredGroupings}: measurements where they exist,
 * corrected predictions elsewhere.
 *
 * @param plan the grouping plan with the chosen grouping and the runners-up (best first, at most
 *     three); {@code plan.method()} says how the choice was reached
 * @param choice the chosen candidate with what it rests on; null when the plan has no choice
 * @param ranked every candidate compared, best first (the choice first)
 * @param why one sentence: what the choice rests on and what it beat
 */
public record MeasuredChoice(GroupingPlan plan, AssessedGrouping choice, List<AssessedGrouping> ranked, String why) {
  public MeasuredChoice {
    ranked = List.copyOf(ranked);
  }

  /** The best candidate after the choice, or null. */
  public AssessedGrouping runnerUp() {
    return ranked.size() > 1 ? ranked.get(1) : null;
  }
}

package io.partita.planning.version;

import java.util.List;

/**
 * The version chosen for one host, with every candidate's outcome: the chosen one first, then the
 * runners-up best first, then the excluded ones by version id.
 *
 * @param chosenVersionId {@code null} when no candidate qualifies; {@code noChoiceReason} says why
 * @param objective what the ranking optimised
 */
public record VersionPlan(
    String hostId, String chosenVersionId, List<VersionOutcome> outcomes, String noChoiceReason,
    VersionObjective objective) {
  public VersionPlan {
    outcomes = List.copyOf(outcomes);
    objective = objective == null ? VersionObjective.LATENCY : objective;
  }

  /** A plan ranked by the default objective (latency). */
  public VersionPlan(String hostId, String chosenVersionId, List<VersionOutcome> outcomes, String noChoiceReason) {
    this(hostId, chosenVersionId, outcomes, noChoiceReason, VersionObjective.LATENCY);
  }
}

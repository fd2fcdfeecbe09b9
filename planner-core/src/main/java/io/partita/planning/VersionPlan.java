package io.partita.planning;

import java.util.List;

/**
 * The version chosen for one host, with every candidate's outcome: the chosen one first, then the
 * runners-up best first, then the excluded ones by version id.
 *
 * @param chosenVersionId {@code null} when no candidate qualifies; {@code noChoiceReason} says why
 */
public record VersionPlan(
    String hostId, String chosenVersionId, List<VersionOutcome> outcomes, String noChoiceReason) {
  public VersionPlan {
    outcomes = List.copyOf(outcomes);
  }
}

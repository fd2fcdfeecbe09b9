package io.partita.planning.version;

import io.partita.planning.Hysteresis;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@link Hysteresis} for version choice: the running version stays unless the fresh choice is
 * faster by more than the margin. Pure.
 */
public final class VersionHysteresis {

  private VersionHysteresis() {}

  /**
   * The version plan to run: {@code fresh}, unless the incumbent version still qualifies (it is a
   * runner-up of {@code fresh}) and the fresh choice is not faster than it by more than the
   * margin; then the incumbent stays chosen and the fresh choice becomes a runner-up, with reasons
   * that say so. Under the accuracy objective a more accurate fresh choice always replaces the
   * incumbent (accuracy is declared, not measured, so it carries no noise to damp); the margin
   * applies only between versions of equal accuracy.
   */
  public static VersionPlan keepVersion(VersionPlan fresh, String incumbent, double margin) {
    if (incumbent == null || fresh.chosenVersionId() == null || incumbent.equals(fresh.chosenVersionId())) {
      return fresh;
    }
    VersionOutcome chosen = fresh.outcomes().get(0);
    VersionOutcome kept = null;
    for (VersionOutcome o : fresh.outcomes()) {
      if (o.versionId().equals(incumbent) && o.status() == VersionOutcome.Status.RUNNER_UP) {
        kept = o;
      }
    }
    if (kept == null || kept.latencyMs() == null || chosen.latencyMs() == null
        || Hysteresis.replacesLower(kept.latencyMs(), chosen.latencyMs(), margin)) {
      return fresh;
    }
    if (fresh.objective() == VersionObjective.ACCURACY && !Objects.equals(kept.accuracy(), chosen.accuracy())) {
      return fresh;
    }
    List<VersionOutcome> outcomes = new ArrayList<>();
    outcomes.add(new VersionOutcome(kept.versionId(), VersionOutcome.Status.CHOSEN, kept.latencyMs(), kept.predicted(),
        kept.sourceHost(), kept.accuracy(), "kept: version " + chosen.versionId() + " (" + VersionSelector.ms(chosen.latencyMs())
        + ") is not faster by more than the hysteresis margin " + margin + " (fresh ranking: " + kept.reason() + ")"));
    outcomes.add(new VersionOutcome(chosen.versionId(), VersionOutcome.Status.RUNNER_UP, chosen.latencyMs(),
        chosen.predicted(), chosen.sourceHost(), chosen.accuracy(), "faster, but within the hysteresis margin of the running version"));
    for (VersionOutcome o : fresh.outcomes()) {
      if (!o.versionId().equals(kept.versionId()) && !o.versionId().equals(chosen.versionId())) {
        outcomes.add(o);
      }
    }
    return new VersionPlan(fresh.hostId(), kept.versionId(), outcomes, null, fresh.objective());
  }
}

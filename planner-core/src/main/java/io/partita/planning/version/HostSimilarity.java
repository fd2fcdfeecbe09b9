package io.partita.planning.version;

import java.util.Collection;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * Which measured host a host without measurements of its own is predicted from (planning method
 * 4: "the most similar measured host"), and how its times scale. One order for every prediction:
 * version choice ({@link VersionSelector}) and the partition profile of a host not measured yet
 * ({@link ProfilePrediction}) use this class, so the two never pick different sources by different
 * rules.
 *
 * <p><b>Order</b> (the design leaves similarity open): the same set of execution providers first;
 * then the larger Jaccard overlap {@code |F_a & F_b| / |F_a | F_b|} of CPU flags; then the smaller
 * {@code |ln(score_there / score_here)|} (closest baseline); then the host id, so the order is total
 * and deterministic.
 *
 * <p><b>Scaling</b>: {@code T_here = T_there * score_there / score_here} (baseline scores, higher =
 * faster). It does not say whether a source can run what is predicted; the callers filter first.
 */
public final class HostSimilarity {

  private HostSimilarity() {}

  /** Negative when {@code a} is more similar to {@code target} than {@code b} (see the class comment). */
  public static int compare(HostFacts target, HostFacts a, HostFacts b) {
    int c = Boolean.compare(b.providers().equals(target.providers()), a.providers().equals(target.providers()));
    if (c != 0) {
      return c;
    }
    c = Double.compare(jaccard(b.cpuFlags(), target.cpuFlags()), jaccard(a.cpuFlags(), target.cpuFlags()));
    if (c != 0) {
      return c;
    }
    c = Double.compare(scoreDistance(a, target), scoreDistance(b, target));
    if (c != 0) {
      return c;
    }
    return a.hostId().compareTo(b.hostId());
  }

  /** The most similar of {@code candidates} to {@code target}, never {@code target} itself; empty when none. */
  public static Optional<HostFacts> mostSimilar(HostFacts target, Collection<HostFacts> candidates) {
    HostFacts best = null;
    for (HostFacts h : candidates) {
      if (!h.hostId().equals(target.hostId()) && (best == null || compare(target, h, best) < 0)) {
        best = h;
      }
    }
    return Optional.ofNullable(best);
  }

  /** The factor a time measured on {@code source} is multiplied by to predict it on {@code target}. */
  public static double timeScale(HostFacts source, HostFacts target) {
    return source.baselineScore() / target.baselineScore();
  }

  private static double jaccard(Set<String> a, Set<String> b) {
    if (a.isEmpty() && b.isEmpty()) {
      return 1.0;
    }
    Set<String> both = new HashSet<>(a);
    both.retainAll(b);
    Set<String> either = new HashSet<>(a);
    either.addAll(b);
    return (double) both.size() / either.size();
  }

  private static double scoreDistance(HostFacts a, HostFacts target) {
    return Math.abs(Math.log(a.baselineScore() / target.baselineScore()));
  }
}

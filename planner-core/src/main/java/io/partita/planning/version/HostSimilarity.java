package io.partita.planning.version;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
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
    return compare(place(target, a), place(target, b));
  }

  /**
   * {@code candidates} in similarity order to {@code target}, the most similar first, without
   * {@code target} itself (by host id). The first one a caller can use is {@link #mostSimilar} of
   * the usable ones, so a caller looking for the most similar host that has something (a profile of
   * a model) walks this list, once sorted, instead of asking every host. Each candidate's place is
   * computed once: {@code O(n log n)} for {@code n} candidates.
   */
  public static List<HostFacts> ordered(HostFacts target, Collection<HostFacts> candidates) {
    List<Place> places = new ArrayList<>(candidates.size());
    for (HostFacts h : candidates) {
      if (!h.hostId().equals(target.hostId())) {
        places.add(place(target, h));
      }
    }
    places.sort(HostSimilarity::compare);
    List<HostFacts> out = new ArrayList<>(places.size());
    places.forEach(p -> out.add(p.host()));
    return out;
  }

  /** What orders a candidate for one target; {@link #compare} and {@link #ordered} both compare these, so they agree. */
  private record Place(HostFacts host, boolean sameProviders, double flagOverlap, double scoreDistance) {}

  private static Place place(HostFacts target, HostFacts h) {
    return new Place(h, h.providers().equals(target.providers()), jaccard(h.cpuFlags(), target.cpuFlags()),
        scoreDistance(h, target));
  }

  private static int compare(Place a, Place b) {
    int c = Boolean.compare(b.sameProviders(), a.sameProviders());
    if (c != 0) {
      return c;
    }
    c = Double.compare(b.flagOverlap(), a.flagOverlap());
    if (c != 0) {
      return c;
    }
    c = Double.compare(a.scoreDistance(), b.scoreDistance());
    if (c != 0) {
      return c;
    }
    return a.host().hostId().compareTo(b.host().hostId());
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

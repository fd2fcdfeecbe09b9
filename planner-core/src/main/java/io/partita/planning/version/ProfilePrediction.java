package io.partita.planning.version;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The grouping profile of a host that has not measured a model version yet, predicted from the
 * most similar host that has (planning method 4's prediction, applied to method 1's input): the
 * source is chosen by {@link HostSimilarity}, the order version choice uses, and every time is
 * scaled by {@link HostSimilarity#timeScale} ({@code score_there / score_here}). Sizes, batch,
 * provider and per-instance memory are the source's: memory does not depend on speed, and only
 * sizes measured somewhere are ever used (no time is interpolated).
 *
 * <p>Guarantees: a host is never predicted from itself; a source whose profile uses an execution
 * provider the host does not load is never used; a scaled time that is not finite drops its point.
 * Pure and independent of the order of the sources. It does not say whether a prediction should be
 * used: the caller uses it only while the host has no profile of its own.
 */
public final class ProfilePrediction {

  private ProfilePrediction() {}

  /** A profile measured on one host: one provider and batch, its measured sizes. */
  public record Source(HostFacts host, String provider, int batch, List<ProfilePoint> points) {
    public Source {
      points = List.copyOf(points);
    }
  }

  /**
   * A predicted profile.
   *
   * @param source the host it was measured on
   * @param timeScale the factor every time was multiplied by
   * @param points the source's points with scaled times, by size
   */
  public record Predicted(HostFacts source, double timeScale, String provider, int batch, List<ProfilePoint> points) {
    public Predicted {
      points = List.copyOf(points);
    }

    /** E.g. {@code host-a's timings x baseline 100.0 / 50.0}. */
    public String describe(HostFacts target) {
      return String.format(Locale.ROOT, "host %s's timings x baseline %.1f / %.1f", source.hostId(),
          source.baselineScore(), target.baselineScore());
    }
  }

  /**
   * The profile of {@code target} predicted from the most similar usable source; empty when none.
   *
   * @param sources at most one per host
   * @throws IllegalArgumentException when two sources name the same host
   */
  public static Optional<Predicted> predict(HostFacts target, List<Source> sources) {
    Map<String, Source> usable = new LinkedHashMap<>();
    for (Source s : sources) {
      if (usable.containsKey(s.host().hostId())) {
        throw new IllegalArgumentException("sources: host " + s.host().hostId() + " given twice");
      }
      if (!s.host().hostId().equals(target.hostId()) && target.providers().contains(s.provider())
          && !s.points().isEmpty()) {
        usable.put(s.host().hostId(), s);
      }
    }
    return HostSimilarity.mostSimilar(target, usable.values().stream().map(Source::host).toList()).flatMap(host -> {
      Source s = usable.get(host.hostId());
      double scale = HostSimilarity.timeScale(host, target);
      List<ProfilePoint> points = new ArrayList<>();
      for (ProfilePoint p : s.points()) {
        double t = p.latencyMs() * scale;
        if (t > 0 && Double.isFinite(t)) {
          points.add(new ProfilePoint(p.size(), t, p.memoryBytes()));
        }
      }
      points.sort((a, b) -> Integer.compare(a.size(), b.size()));
      return points.isEmpty() ? Optional.empty() : Optional.of(new Predicted(host, scale, s.provider(), s.batch(), points));
    });
  }
}

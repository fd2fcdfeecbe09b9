package io.partita.planning.version;

import io.partita.planning.Tolerance;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Chooses the version of a model that one host should run (docs/concepts.md, method 4).
 *
 * <p><b>Rule.</b>
 * <ol>
 *   <li>Excluded first: a version needing an execution provider the host does not load, or
 *       declaring more memory than the host has.
 *   <li>Latency: the median of this host's own observations of the version when there are any
 *       (measured). Otherwise predicted from the most similar host that measured it and can run
 *       it ({@link HostSimilarity}): {@code T_here = T_there * score_there / score_here} (baseline
 *       scores, higher = faster), recorded as predicted with its source host. No observation
 *       anywhere: excluded.
 *   <li>Requirements filter: latency above the objective, accuracy below the minimum (unknown
 *       accuracy fails a minimum), memory above the cap: excluded, with the figure.
 *   <li>Ranking by the requirements' {@link VersionObjective}: {@code LATENCY} (default), the
 *       fastest remaining version wins, ties (relative 1e-9) to the higher accuracy (unknown
 *       lowest), then to the lexicographically smaller version id; {@code ACCURACY}, the most
 *       accurate remaining version wins, ties to the faster, then to the smaller version id.
 * </ol>
 *
 * <p><b>Reasons.</b> Every outcome says where its latency comes from (measured here, or predicted
 * from which host with the figures of the scaling) and, with a latency objective, how it compares
 * with it; a runner-up says why it lost to the chosen version (slower, less accurate, or the id
 * tie-break).
 *
 * <p><b>Guarantees.</b> Never chooses a version the host cannot run or one failing a requirement;
 * a measurement on the host always overrules a prediction for it (so a predicted choice that
 * loses once measured is corrected by the next plan); deterministic and independent of the
 * input order. It does not run the baseline benchmark: the score is an input.
 */
public final class VersionSelector {

  private VersionSelector() {}

  /** A latency and where it comes from; the source figures only matter when predicted. */
  private record Estimate(double latencyMs, boolean predicted, String source, double sourceLatencyMs,
                          double sourceScore, double hostScore) {
    /** E.g. {@code 12.0 ms measured on this host} or {@code 16.0 ms predicted from host lab (8.0 ms there x baseline 100.0 / 50.0)}. */
    String describe() {
      if (!predicted) {
        return ms(latencyMs) + " measured on this host";
      }
      return ms(latencyMs) + " predicted from host " + source + " (" + ms(sourceLatencyMs) + " there x baseline "
          + num(sourceScore) + " / " + num(hostScore) + ")";
    }
  }

  private record Ranked(ModelVersion version, Estimate estimate) {}

  public static VersionPlan choose(VersionProblem problem) {
    HostFacts host = problem.host();
    VersionRequirements req = problem.requirements() == null ? VersionRequirements.NONE
        : problem.requirements();
    List<Ranked> ranked = new ArrayList<>();
    List<VersionOutcome> excluded = new ArrayList<>();
    List<ModelVersion> candidates = new ArrayList<>(problem.candidates());
    candidates.sort(Comparator.comparing(ModelVersion::versionId));
    Medians medians = new Medians(problem.timings());
    for (ModelVersion v : candidates) {
      Set<String> missing = new HashSet<>(v.requiredProviders());
      missing.removeAll(host.providers());
      if (!missing.isEmpty()) {
        excluded.add(out(v, VersionOutcome.Status.EXCLUDED, null,
            "host cannot run it: execution provider(s) " + new TreeSet<>(missing) + " missing"));
        continue;
      }
      if (v.memoryBytes() > host.memoryBytes()) {
        excluded.add(out(v, VersionOutcome.Status.EXCLUDED, null, "host cannot run it: needs "
            + v.memoryBytes() + " B, host has " + host.memoryBytes() + " B"));
        continue;
      }
      Estimate e = estimate(problem, medians, v);
      if (e == null) {
        excluded.add(out(v, VersionOutcome.Status.EXCLUDED, null,
            "no measurement on this host nor on any other host that can run it"));
        continue;
      }
      String failed = failedRequirement(req, v, e);
      if (failed != null) {
        excluded.add(out(v, VersionOutcome.Status.EXCLUDED, e, failed));
        continue;
      }
      ranked.add(new Ranked(v, e));
    }
    ranked.sort(order(req.objective()));
    List<VersionOutcome> outcomes = new ArrayList<>();
    Ranked best = ranked.isEmpty() ? null : ranked.get(0);
    for (Ranked r : ranked) {
      if (r == best) {
        outcomes.add(out(r.version(), VersionOutcome.Status.CHOSEN, r.estimate(), chosenReason(req, r)));
      } else {
        outcomes.add(out(r.version(), VersionOutcome.Status.RUNNER_UP, r.estimate(),
            "lost to " + best.version().versionId() + ": " + lostBecause(req.objective(), r, best) + "; "
                + latencyClause(req, r.estimate())));
      }
    }
    outcomes.addAll(excluded);
    String none = best == null ? "no candidate version qualifies: " + excluded.size()
        + " excluded (see outcomes)" : null;
    return new VersionPlan(host.hostId(), best == null ? null : best.version().versionId(), outcomes, none,
        req.objective());
  }

  /**
   * Whether {@code host} can run {@code v} at all: it loads every execution provider the version
   * needs and has the memory it declares. {@link #choose} excludes a version that fails this before
   * it looks for any latency, so a caller that gathers the evidence of a problem needs none for it.
   */
  public static boolean canRun(HostFacts host, ModelVersion v) {
    return host.providers().containsAll(v.requiredProviders()) && v.memoryBytes() <= host.memoryBytes();
  }

  /**
   * The similarity order of hosts relative to {@code target}: negative when {@code a} is more
   * similar than {@code b} ({@link HostSimilarity#compare}).
   */
  public static int compareSimilarity(HostFacts target, HostFacts a, HostFacts b) {
    return HostSimilarity.compare(target, a, b);
  }

  private static Estimate estimate(VersionProblem problem, Medians medians, ModelVersion v) {
    HostFacts host = problem.host();
    Double own = medians.of(v.versionId(), host.hostId());
    if (own != null) {
      return new Estimate(own, false, host.hostId(), own, host.baselineScore(), host.baselineScore());
    }
    List<HostFacts> measured = new ArrayList<>();
    for (HostFacts other : problem.otherHosts()) {
      if (other.providers().containsAll(v.requiredProviders()) && medians.of(v.versionId(), other.hostId()) != null) {
        measured.add(other);
      }
    }
    return HostSimilarity.mostSimilar(host, measured).map(source -> {
      double there = medians.of(v.versionId(), source.hostId());
      return new Estimate(there * HostSimilarity.timeScale(source, host), true, source.hostId(), there,
          source.baselineScore(), host.baselineScore());
    }).orElse(null);
  }

  /**
   * The median latency of each version on each host, from one pass over the problem's timings. A
   * host that predicts looks up every other host's median of every candidate: scanning the timings
   * for each of them made one version choice {@code O(H T)} in hosts and timings, which at 1,000
   * hosts held a planning pass for minutes.
   */
  private static final class Medians {
    private final Map<String, Map<String, List<Double>>> byVersion = new HashMap<>();
    private final Map<String, Map<String, Double>> medians = new HashMap<>();

    Medians(List<TimingObservation> timings) {
      for (TimingObservation t : timings) {
        byVersion.computeIfAbsent(t.versionId(), k -> new HashMap<>()).computeIfAbsent(t.hostId(), k -> new ArrayList<>())
            .add(t.latencyMs());
      }
    }

    /** The median of the version's timings on the host, or null when it has none. */
    Double of(String version, String hostId) {
      List<Double> values = byVersion.getOrDefault(version, Map.of()).get(hostId);
      if (values == null) {
        return null;
      }
      return medians.computeIfAbsent(version, k -> new HashMap<>()).computeIfAbsent(hostId, k -> {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Comparator.naturalOrder());
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
      });
    }
  }

  private static String failedRequirement(VersionRequirements req, ModelVersion v, Estimate e) {
    if (req.latencyObjectiveMs() != null && e.latencyMs() > req.latencyObjectiveMs()) {
      return "latency " + e.describe() + " exceeds the objective of " + ms(req.latencyObjectiveMs());
    }
    if (req.minAccuracy() != null && (v.accuracy() == null || v.accuracy() < req.minAccuracy())) {
      return "accuracy " + v.accuracy() + " below the minimum of " + req.minAccuracy();
    }
    if (req.memoryCapBytes() != null && v.memoryBytes() > req.memoryCapBytes()) {
      return "memory " + v.memoryBytes() + " B above the cap of " + req.memoryCapBytes() + " B";
    }
    return null;
  }

  private static String chosenReason(VersionRequirements req, Ranked r) {
    if (req.objective() == VersionObjective.ACCURACY) {
      return "most accurate qualifying version (objective accuracy): accuracy " + r.version().accuracy() + ", "
          + latencyClause(req, r.estimate());
    }
    return "fastest qualifying version: " + latencyClause(req, r.estimate());
  }

  /** The latency with its source and, under a latency objective, the objective it meets. */
  private static String latencyClause(VersionRequirements req, Estimate e) {
    return "latency " + e.describe() + (req.latencyObjectiveMs() == null ? ""
        : ", within the objective of " + ms(req.latencyObjectiveMs()));
  }

  /** Why a runner-up ranks below the chosen version, in the order the ranking compares. */
  private static String lostBecause(VersionObjective objective, Ranked r, Ranked best) {
    int latency = Tolerance.compare(r.estimate().latencyMs(), best.estimate().latencyMs());
    int accuracy = Double.compare(accuracy(best.version()), accuracy(r.version()));
    String slower = "slower (" + ms(r.estimate().latencyMs()) + " against " + ms(best.estimate().latencyMs()) + ")";
    String lessAccurate = "less accurate (" + r.version().accuracy() + " against " + best.version().accuracy() + ")";
    if (objective == VersionObjective.ACCURACY) {
      if (accuracy > 0) {
        return lessAccurate;
      }
      return latency > 0 ? "as accurate, " + slower : "as accurate and as fast, larger version id";
    }
    if (latency > 0) {
      return slower;
    }
    return accuracy > 0 ? "as fast, " + lessAccurate : "as fast and as accurate, larger version id";
  }

  private static Comparator<Ranked> order(VersionObjective objective) {
    Comparator<Ranked> latency = (a, b) -> Tolerance.compare(a.estimate().latencyMs(), b.estimate().latencyMs());
    Comparator<Ranked> accuracy = (a, b) -> Double.compare(accuracy(b.version()), accuracy(a.version()));
    Comparator<Ranked> id = Comparator.comparing(r -> r.version().versionId());
    return objective == VersionObjective.ACCURACY
        ? accuracy.thenComparing(latency).thenComparing(id)
        : latency.thenComparing(accuracy).thenComparing(id);
  }

  private static double accuracy(ModelVersion v) {
    return v.accuracy() == null ? Double.NEGATIVE_INFINITY : v.accuracy();
  }

  private static VersionOutcome out(ModelVersion v, VersionOutcome.Status status, Estimate e, String why) {
    return new VersionOutcome(v.versionId(), status, e == null ? null : e.latencyMs(),
        e != null && e.predicted(), e == null ? null : e.source(), v.accuracy(), why);
  }

  /** Milliseconds with up to three decimals and at least one ({@code 16.0 ms}, {@code 13.333 ms}). */
  static String ms(double v) {
    return num(v) + " ms";
  }

  private static String num(double v) {
    String s = String.format(Locale.ROOT, "%.3f", v);
    s = s.replaceAll("0+$", "");
    return s.endsWith(".") ? s + "0" : s;
  }
}

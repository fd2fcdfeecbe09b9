package io.partita.planning;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Chooses the version of a model that one host should run (docs/concepts.md, method 4).
 *
 * <p><b>Rule.</b>
 * <ol>
 *   <li>Excluded first: a version needing an execution provider the host does not load, or
 *       declaring more memory than the host has.
 *   <li>Latency: the median of this host's own observations of the version when there are any
 *       (measured). Otherwise predicted from the most similar host that measured it and can run
 *       it: {@code T_here = T_there * score_there / score_here} (baseline scores, higher = faster),
 *       recorded as predicted with its source host. No observation anywhere: excluded.
 *   <li>Similarity, which the design leaves open, is ordered by: same set of execution providers
 *       first; then the larger Jaccard overlap {@code |F_a & F_b| / |F_a | F_b|} of CPU flags; then
 *       the smaller {@code |ln(score_there / score_here)|} (closest baseline); then the host id.
 *   <li>Requirements filter: latency above the objective, accuracy below the minimum (unknown
 *       accuracy fails a minimum), memory above the cap: excluded, with the figure.
 *   <li>The fastest remaining version wins; ties (relative 1e-9) go to the higher accuracy
 *       (unknown lowest), then to the lexicographically smaller version id.
 * </ol>
 *
 * <p><b>Guarantees.</b> Never chooses a version the host cannot run or one failing a requirement;
 * a measurement on the host always overrules a prediction for it (so a predicted choice that
 * loses once measured is corrected by the next plan); deterministic and independent of the
 * input order. It does not run the baseline benchmark: the score is an input.
 */
public final class VersionSelector {

  private VersionSelector() {}

  private record Estimate(double latencyMs, boolean predicted, String source) {}

  public static VersionPlan choose(VersionProblem problem) {
    HostFacts host = problem.host();
    VersionRequirements req = problem.requirements() == null ? VersionRequirements.NONE
        : problem.requirements();
    List<VersionOutcome> ranked = new ArrayList<>();
    List<VersionOutcome> excluded = new ArrayList<>();
    List<ModelVersion> candidates = new ArrayList<>(problem.candidates());
    candidates.sort(Comparator.comparing(ModelVersion::versionId));
    for (ModelVersion v : candidates) {
      Set<String> missing = new HashSet<>(v.requiredProviders());
      missing.removeAll(host.providers());
      if (!missing.isEmpty()) {
        excluded.add(out(v, VersionOutcome.Status.EXCLUDED, null,
            "host cannot run it: execution provider(s) " + new java.util.TreeSet<>(missing) + " missing"));
        continue;
      }
      if (v.memoryBytes() > host.memoryBytes()) {
        excluded.add(out(v, VersionOutcome.Status.EXCLUDED, null, "host cannot run it: needs "
            + v.memoryBytes() + " B, host has " + host.memoryBytes() + " B"));
        continue;
      }
      Estimate e = estimate(problem, v);
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
      ranked.add(out(v, VersionOutcome.Status.RUNNER_UP, e, e.predicted()
          ? "predicted from host " + e.source() + " scaled by baseline scores" : "measured on this host"));
    }
    ranked.sort(VersionSelector::compare);
    List<VersionOutcome> outcomes = new ArrayList<>();
    String chosen = null;
    for (int i = 0; i < ranked.size(); i++) {
      VersionOutcome o = ranked.get(i);
      if (i == 0) {
        chosen = o.versionId();
        o = new VersionOutcome(o.versionId(), VersionOutcome.Status.CHOSEN, o.latencyMs(), o.predicted(),
            o.sourceHost(), o.accuracy(), "fastest qualifying version (" + o.reason() + ")");
      }
      outcomes.add(o);
    }
    outcomes.addAll(excluded);
    String none = chosen == null ? "no candidate version qualifies: " + excluded.size()
        + " excluded (see outcomes)" : null;
    return new VersionPlan(host.hostId(), chosen, outcomes, none);
  }

  /**
   * The similarity order of hosts relative to {@code target}: negative when {@code a} is more
   * similar than {@code b}. See the class comment.
   */
  public static int compareSimilarity(HostFacts target, HostFacts a, HostFacts b) {
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

  private static Estimate estimate(VersionProblem problem, ModelVersion v) {
    HostFacts host = problem.host();
    Double own = median(problem.timings(), v.versionId(), host.hostId());
    if (own != null) {
      return new Estimate(own, false, host.hostId());
    }
    HostFacts source = null;
    double sourceLatency = 0;
    for (HostFacts other : problem.otherHosts()) {
      if (other.hostId().equals(host.hostId()) || !other.providers().containsAll(v.requiredProviders())) {
        continue;
      }
      Double there = median(problem.timings(), v.versionId(), other.hostId());
      if (there != null && (source == null || compareSimilarity(host, other, source) < 0)) {
        source = other;
        sourceLatency = there;
      }
    }
    if (source == null) {
      return null;
    }
    return new Estimate(sourceLatency * source.baselineScore() / host.baselineScore(), true,
        source.hostId());
  }

  private static Double median(List<TimingObservation> timings, String version, String hostId) {
    List<Double> values = new ArrayList<>();
    for (TimingObservation t : timings) {
      if (t.versionId().equals(version) && t.hostId().equals(hostId)) {
        values.add(t.latencyMs());
      }
    }
    if (values.isEmpty()) {
      return null;
    }
    values.sort(Comparator.naturalOrder());
    int n = values.size();
    return n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2;
  }

  private static String failedRequirement(VersionRequirements req, ModelVersion v, Estimate e) {
    if (req.latencyObjectiveMs() != null && e.latencyMs() > req.latencyObjectiveMs()) {
      return "latency " + e.latencyMs() + " ms" + (e.predicted() ? " (predicted)" : "")
          + " exceeds the objective of " + req.latencyObjectiveMs() + " ms";
    }
    if (req.minAccuracy() != null && (v.accuracy() == null || v.accuracy() < req.minAccuracy())) {
      return "accuracy " + v.accuracy() + " below the minimum of " + req.minAccuracy();
    }
    if (req.memoryCapBytes() != null && v.memoryBytes() > req.memoryCapBytes()) {
      return "memory " + v.memoryBytes() + " B above the cap of " + req.memoryCapBytes() + " B";
    }
    return null;
  }

  private static int compare(VersionOutcome a, VersionOutcome b) {
    int c = Tolerance.compare(a.latencyMs(), b.latencyMs());
    if (c != 0) {
      return c;
    }
    double accA = a.accuracy() == null ? Double.NEGATIVE_INFINITY : a.accuracy();
    double accB = b.accuracy() == null ? Double.NEGATIVE_INFINITY : b.accuracy();
    c = Double.compare(accB, accA);
    if (c != 0) {
      return c;
    }
    return a.versionId().compareTo(b.versionId());
  }

  private static VersionOutcome out(ModelVersion v, VersionOutcome.Status status, Estimate e, String why) {
    return new VersionOutcome(v.versionId(), status, e == null ? null : e.latencyMs(),
        e != null && e.predicted(), e == null ? null : e.source(), v.accuracy(), why);
  }
}

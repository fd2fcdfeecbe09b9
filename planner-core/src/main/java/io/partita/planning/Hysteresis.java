package io.partita.planning;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Keeps a plan that is already running unless a new one is better by more than a margin, so that
 * measurement noise (timings that move by a few percent from one run to the next) never flips
 * slots or versions back and forth. The margin is relative: with margin {@code h}, a challenger
 * replaces the incumbent only when it is better by more than {@code h} of the incumbent's figure.
 * With {@code h = 0} the fresh plan always wins, as without this class. Pure.
 */
public final class Hysteresis {

  private Hysteresis() {}

  /** Whether a challenger replaces the incumbent when lower is better (latency, cost). */
  public static boolean replacesLower(double incumbent, double challenger, double margin) {
    return challenger < incumbent * (1 - margin);
  }

  /** Whether a challenger replaces the incumbent when higher is better (throughput). */
  public static boolean replacesHigher(double incumbent, double challenger, double margin) {
    return challenger > incumbent * (1 + margin);
  }

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
        || replacesLower(kept.latencyMs(), chosen.latencyMs(), margin)) {
      return fresh;
    }
    if (fresh.objective() == VersionObjective.ACCURACY && !Objects.equals(kept.accuracy(), chosen.accuracy())) {
      return fresh;
    }
    List<VersionOutcome> outcomes = new ArrayList<>();
    outcomes.add(new VersionOutcome(kept.versionId(), VersionOutcome.Status.CHOSEN, kept.latencyMs(), kept.predicted(),
        kept.sourceHost(), kept.accuracy(), "kept: version " + chosen.versionId() + " (" + chosen.latencyMs()
        + " ms) is not faster by more than the hysteresis margin " + margin + " (fresh ranking: " + kept.reason() + ")"));
    outcomes.add(new VersionOutcome(chosen.versionId(), VersionOutcome.Status.RUNNER_UP, chosen.latencyMs(),
        chosen.predicted(), chosen.sourceHost(), chosen.accuracy(), "faster, but within the hysteresis margin of the running version"));
    for (VersionOutcome o : fresh.outcomes()) {
      if (!o.versionId().equals(kept.versionId()) && !o.versionId().equals(chosen.versionId())) {
        outcomes.add(o);
      }
    }
    return new VersionPlan(fresh.hostId(), kept.versionId(), outcomes, null, fresh.objective());
  }

  /**
   * The grouping plan to run: {@code fresh}, unless the incumbent sizes are still measured and
   * eligible in {@code problem} and the fresh choice is not better than them by more than the
   * margin (throughput, or the largest latency under the latency objective); then the incumbent
   * grouping, with its figures on today's profile, is the choice.
   */
  public static GroupingPlan keepGrouping(GroupingProblem problem, GroupingPlan fresh, List<Integer> incumbent,
      double margin) {
    if (incumbent == null || incumbent.isEmpty() || !fresh.planned()) {
      return fresh;
    }
    Grouping current;
    try {
      current = GroupingPlanner.toGrouping(problem, incumbent);
    } catch (IllegalArgumentException notMeasured) {
      return fresh;
    }
    if (current.sizes().equals(fresh.choice().sizes()) || !GroupingPlanner.isEligible(problem, current)) {
      return fresh;
    }
    Grouping challenger = fresh.choice();
    boolean better = problem.objective() == GroupingObjective.LATENCY
        ? replacesLower(current.maxLatencyMs(), challenger.maxLatencyMs(), margin)
        : replacesHigher(current.throughputPerSecond(), challenger.throughputPerSecond(), margin);
    if (better) {
      return fresh;
    }
    List<Grouping> runnersUp = new ArrayList<>();
    runnersUp.add(challenger);
    fresh.runnersUp().stream().filter(g -> !g.sizes().equals(current.sizes())).limit(2).forEach(runnersUp::add);
    return new GroupingPlan(fresh.modelId(), fresh.objective(), current, runnersUp, fresh.excludedSizes(),
        fresh.maxPartitions(), null, "kept (hysteresis)");
  }

  /** {@link MappingPlan.Improvement#improvedFrom()} of a plan that kept the running mapping. */
  public static final String KEPT_MAPPING = "kept (hysteresis)";

  /**
   * The mapping to run: {@code fresh}, unless {@code incumbent} (resource per service and model,
   * keys {@code service + "/" + model}) still places exactly the problem's models, each on a
   * resource that can run it, and the fresh mapping's bottleneck is not lower than the
   * incumbent's on today's times by more than the margin; then the incumbent mapping with its
   * loads on today's problem, {@code improvedFrom} {@link #KEPT_MAPPING}. The fresh plan's schemes
   * and exact optimum stay as they are (the gap is the incumbent's cost over the optimum's).
   */
  public static MappingPlan keepMapping(MappingProblem problem, MappingPlan fresh, Map<String, String> incumbent,
      double margin) {
    if (incumbent == null || incumbent.isEmpty() || !fresh.planned() || incumbent.size() != fresh.assignments().size()) {
      return fresh;
    }
    Map<String, ResourceSpec> resources = new HashMap<>();
    problem.resources().forEach(r -> resources.put(r.id(), r));
    Map<String, Double> rates = new HashMap<>();
    problem.services().forEach(s -> s.stages().forEach(st -> rates.put(s.id() + "/" + st.modelId(), st.requestsPerSecond())));
    Map<String, Double> loads = new TreeMap<>();
    List<Assignment> kept = new ArrayList<>();
    boolean same = true;
    for (Assignment a : fresh.assignments()) {
      String key = a.serviceId() + "/" + a.modelId();
      String r = incumbent.get(key);
      ResourceSpec spec = r == null ? null : resources.get(r);
      Double t = spec == null ? null : problem.latencyMs().getOrDefault(a.modelId(), Map.of()).get(r);
      if (t == null) {
        return fresh;
      }
      double load = rates.getOrDefault(key, 0.0) * t / spec.capacity();
      loads.merge(r, load, Double::sum);
      kept.add(new Assignment(a.serviceId(), a.modelId(), r, t, load));
      same &= r.equals(a.resourceId());
    }
    double cost = 0;
    for (double l : loads.values()) {
      cost = Math.max(cost, l);
    }
    if (same || replacesLower(cost, fresh.costMsPerSecond(), margin)) {
      return fresh;
    }
    List<ResourceLoad> resourceLoads = new ArrayList<>();
    for (ResourceLoad l : fresh.loads()) {
      resourceLoads.add(new ResourceLoad(l.resourceId(), l.kind(), loads.getOrDefault(l.resourceId(), 0.0)));
    }
    double latency = kept.stream().mapToDouble(Assignment::latencyMs).sum();
    ExactMapping exact = fresh.exact();
    if (exact != null && exact.computed()) {
      exact = exact.withGap(exact.costMsPerSecond() > 0 ? cost / exact.costMsPerSecond() : 1.0);
    }
    return new MappingPlan(true, fresh.errors(), fresh.services(), new MappingPlan.Improvement(
        fresh.improvement().schemesCostMsPerSecond(), KEPT_MAPPING, 0), kept, resourceLoads, cost, latency, exact);
  }
}

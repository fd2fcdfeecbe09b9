package io.partita.planning.grouping;

import io.partita.planning.Hysteresis;
import io.partita.planning.Tolerance;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Chooses a share's grouping by what was measured: a grouping measured in grouping mode (all its
 * partitions running together) is compared by that measurement; every other grouping by its
 * prediction (the sum of single-size points) times the pool's interference factor {@code f(p)}
 * ({@link Interference}). Pure.
 *
 * <p>Candidates: the exact planner's choice and runners-up ({@link GroupingPlanner}), every measured
 * grouping that is eligible in the problem (its sizes measured as single points, fitting the share,
 * memory, buffer and SLO), and, when the pool has an interference factor, the exact optimum with at
 * most {@code p} partitions for each {@code p} up to {@link #MAX_PARTITION_SWEEP} (so that a factor
 * that penalises many partitions can favour fewer). Order: the highest expected throughput (relative
 * 1e-9 ties), then measured before predicted, fewer partitions, the larger size list; under the
 * latency objective the lowest expected latency first. With no measurement on the pool the choice,
 * runners-up and method are exactly {@link GroupingPlanner}'s.
 *
 * <p>Under serving ({@link ServingFactor}): when the running grouping is measured from serving, every
 * grouping with only an idle figure (the profiler's, or a prediction) is multiplied by the pool's
 * serving factor, so that all are compared under the same serving conditions.
 *
 * <p>Not done here: a measured grouping whose sizes were never measured as single points is not a
 * candidate (its latency and memory are unknown); latencies are not corrected for interference.
 */
public final class MeasuredGroupings {
  /** The largest partition count for which the capped optimum is computed as a candidate. */
  public static final int MAX_PARTITION_SWEEP = 64;
  private static final int RUNNERS_UP = 3;

  private MeasuredGroupings() {}

  /**
   * @param fresh {@link GroupingPlanner#plan(GroupingProblem)} of {@code problem}
   * @param measured grouping-mode measurements of this model version, batch and provider on this
   *     pool, by sizes sorted descending
   */
  public static MeasuredChoice choose(GroupingProblem problem, GroupingPlan fresh,
      Map<List<Integer>, GroupingMeasurement> measured, Interference interference) {
    return choose(problem, fresh, measured, interference, ServingFactor.none());
  }

  /**
   * As above, idle and predicted figures multiplied by {@code serving} ({@link ServingFactor}).
   *
   * @param measured the figure each measured grouping is compared by ({@link ServingFactor#compared})
   */
  public static MeasuredChoice choose(GroupingProblem problem, GroupingPlan fresh,
      Map<List<Integer>, GroupingMeasurement> measured, Interference interference, ServingFactor serving) {
    if (!fresh.planned()) {
      return new MeasuredChoice(fresh, null, List.of(), null);
    }
    Map<List<Integer>, Grouping> candidates = new LinkedHashMap<>();
    candidates.put(fresh.choice().sizes(), fresh.choice());
    fresh.runnersUp().forEach(g -> candidates.putIfAbsent(g.sizes(), g));
    for (GroupingMeasurement m : measured.values()) {
      Grouping g = eligible(problem, m.sizes());
      if (g != null) {
        candidates.putIfAbsent(g.sizes(), g);
      }
    }
    if (!interference.isEmpty()) {
      int maxP = Math.min(problem.maxPartitionsByBuffer(), MAX_PARTITION_SWEEP);
      for (int p = 1; p < maxP; p++) {
        GroupingPlan capped = GroupingPlanner.plan(capPartitions(problem, p));
        if (capped.planned()) {
          candidates.putIfAbsent(capped.choice().sizes(), capped.choice());
        }
      }
    }
    List<AssessedGrouping> ranked = new ArrayList<>();
    candidates.values().forEach(g -> ranked.add(assess(g, measured, interference, serving)));
    ranked.sort(order(problem.objective()));
    AssessedGrouping best = ranked.get(0);
    String method = best.grouping().sizes().equals(fresh.choice().sizes()) ? fresh.method()
        : best.measured() ? "measured" : "corrected prediction";
    return result(fresh, best, ranked, method, why(best, ranked.size() > 1 ? ranked.get(1) : null));
  }

  /**
   * Keeps the running sizes unless the fresh choice's expected figure beats theirs by more than the
   * margin ({@link Hysteresis}), both assessed on the same evidence: a measured running grouping
   * that loses to a measured challenger by more than the margin is replaced.
   */
  public static MeasuredChoice keepRunning(GroupingProblem problem, MeasuredChoice fresh, List<Integer> incumbent,
      Map<List<Integer>, GroupingMeasurement> measured, Interference interference, double margin) {
    return keepRunning(problem, fresh, incumbent, measured, interference, margin, ServingFactor.none());
  }

  /**
   * As above, {@code fresh} chosen with {@code serving}: a running grouping measured from serving
   * is replaced only by one better under the same serving conditions.
   */
  public static MeasuredChoice keepRunning(GroupingProblem problem, MeasuredChoice fresh, List<Integer> incumbent,
      Map<List<Integer>, GroupingMeasurement> measured, Interference interference, double margin,
      ServingFactor serving) {
    if (incumbent == null || incumbent.isEmpty() || fresh.choice() == null) {
      return fresh;
    }
    Grouping current = eligible(problem, incumbent);
    if (current == null || current.sizes().equals(fresh.choice().grouping().sizes())) {
      return fresh;
    }
    AssessedGrouping kept = assess(current, measured, interference, serving);
    AssessedGrouping challenger = fresh.choice();
    boolean better = problem.objective() == GroupingObjective.LATENCY
        ? Hysteresis.replacesLower(kept.expectedLatencyMs(), challenger.expectedLatencyMs(), margin)
        : Hysteresis.replacesHigher(kept.expectedThroughputPerSecond(), challenger.expectedThroughputPerSecond(), margin);
    if (better) {
      return fresh;
    }
    List<AssessedGrouping> ranked = new ArrayList<>();
    ranked.add(kept);
    fresh.ranked().stream().filter(a -> !a.grouping().sizes().equals(kept.grouping().sizes())).forEach(ranked::add);
    String why = "kept " + describe(kept) + ": " + describe(challenger)
        + " is not better by more than the hysteresis margin " + margin;
    return result(fresh.plan(), kept, ranked, "kept (hysteresis)", why);
  }

  /** The figure a grouping is compared by, given the measurements and the pool's interference. */
  public static AssessedGrouping assess(Grouping g, Map<List<Integer>, GroupingMeasurement> measured,
      Interference interference) {
    return assess(g, measured, interference, ServingFactor.none());
  }

  /**
   * As above; a figure not measured from serving (the profiler's, or a prediction) is multiplied by
   * {@code serving}'s factor when it applies, and its latency divided by it (a run at the speed
   * served takes {@code 1 / factor} as long), so that the latency objective compares like with
   * like too.
   */
  public static AssessedGrouping assess(Grouping g, Map<List<Integer>, GroupingMeasurement> measured,
      Interference interference, ServingFactor serving) {
    GroupingMeasurement m = measured.get(g.sizes());
    if (m != null) {
      double s = m.source() == MeasurementSource.SERVING ? 1.0 : serving.factor();
      return new AssessedGrouping(g, ChoiceBasis.MEASURED, m.throughputPerSecond() * s, m.maxLatencyMs() / s,
          m.throughputPerSecond(), 1.0, m.source(), s);
    }
    double f = interference.factor(g.partitions());
    double s = serving.factor();
    return new AssessedGrouping(g, ChoiceBasis.PREDICTED, g.throughputPerSecond() * f * s, g.maxLatencyMs() / s, null,
        f, null, s);
  }

  /**
   * The serving factor of a pool ({@link ServingFactor}) as the grouping {@code running} shows it
   * (the grouping served last, normally the one running): its figure measured from serving over its idle figure (the profiler's grouping-mode
   * measurement, else its prediction times {@code interference}); {@link ServingFactor#none()} when
   * it has no serving figure or is not a grouping of this problem.
   *
   * @param profiled the profiler's grouping-mode measurements, by sizes
   * @param served the measurements from serving, by sizes
   */
  public static ServingFactor servingFactor(GroupingProblem problem, List<Integer> running,
      Map<List<Integer>, GroupingMeasurement> profiled, Map<List<Integer>, GroupingMeasurement> served,
      Interference interference) {
    if (running == null || running.isEmpty()) {
      return ServingFactor.none();
    }
    Grouping g;
    try {
      g = GroupingPlanner.toGrouping(problem, running);
    } catch (IllegalArgumentException | ArithmeticException notPlannable) {
      return ServingFactor.none();
    }
    GroupingMeasurement s = served.get(g.sizes());
    if (s == null || !(s.throughputPerSecond() > 0)) {
      return ServingFactor.none();
    }
    GroupingMeasurement p = profiled.get(g.sizes());
    boolean measured = p != null && p.throughputPerSecond() > 0;
    double idle = measured ? p.throughputPerSecond() : g.throughputPerSecond() * interference.factor(g.partitions());
    if (!(idle > 0) || Double.isInfinite(idle)) {
      return ServingFactor.none();
    }
    return new ServingFactor(g.sizes(), s.throughputPerSecond(), idle, measured);
  }

  /** The grouping of {@code sizes} when every size has a point and it is eligible; else null. */
  static Grouping eligible(GroupingProblem problem, List<Integer> sizes) {
    Grouping g;
    try {
      g = GroupingPlanner.toGrouping(problem, sizes);
    } catch (IllegalArgumentException | ArithmeticException notPlannable) {
      return null;
    }
    return GroupingPlanner.isEligible(problem, g) ? g : null;
  }

  /** The same problem allowing at most {@code p} partitions (through the buffer threshold). */
  static GroupingProblem capPartitions(GroupingProblem problem, int p) {
    long buffer = problem.bufferBytesPerPartition() == 0 ? 1 : problem.bufferBytesPerPartition();
    long threshold = problem.bufferBytesPerPartition() == 0 ? p
        : Math.min(problem.bufferThresholdBytes(), Math.multiplyExact((long) p, buffer));
    return new GroupingProblem(problem.modelId(), problem.poolSize(), problem.poolMemoryBytes(), problem.batchSize(),
        problem.profile(), buffer, threshold, problem.sloMs(), problem.objective());
  }

  static Comparator<AssessedGrouping> order(GroupingObjective objective) {
    Comparator<AssessedGrouping> throughput = (a, b) -> {
      int c = Tolerance.compare(b.expectedThroughputPerSecond(), a.expectedThroughputPerSecond());
      if (c != 0) {
        return c;
      }
      c = Boolean.compare(b.measured(), a.measured());
      if (c != 0) {
        return c;
      }
      c = Integer.compare(a.grouping().partitions(), b.grouping().partitions());
      if (c != 0) {
        return c;
      }
      return -GroupingPlanner.compareSizeLists(a.grouping().sizes(), b.grouping().sizes());
    };
    if (objective == GroupingObjective.LATENCY) {
      return Comparator.comparingDouble(AssessedGrouping::expectedLatencyMs).thenComparing(throughput);
    }
    return throughput;
  }

  private static MeasuredChoice result(GroupingPlan fresh, AssessedGrouping best, List<AssessedGrouping> ranked,
      String method, String why) {
    List<Grouping> runnersUp = new ArrayList<>();
    ranked.stream().skip(1).limit(RUNNERS_UP).forEach(a -> runnersUp.add(a.grouping()));
    GroupingPlan plan = new GroupingPlan(fresh.modelId(), fresh.objective(), best.grouping(), runnersUp,
        fresh.excludedSizes(), fresh.maxPartitions(), null, method);
    return new MeasuredChoice(plan, best, ranked, why);
  }

  private static String why(AssessedGrouping best, AssessedGrouping next) {
    String head = describe(best);
    return next == null ? head + "; no other eligible grouping" : head + ", ahead of " + describe(next);
  }

  /**
   * E.g. {@code [2] measured 160.0/s (predicted 166.7/s)}, {@code [2] measured from serving 150.0/s
   * (predicted 166.7/s)}, {@code [1, 1] predicted 200.0/s x 0.60 = 120.0/s} or, under serving,
   * {@code [2] predicted 166.7/s x serving 0.60 = 100.0/s}.
   */
  static String describe(AssessedGrouping a) {
    Grouping g = a.grouping();
    if (a.servingFactor() != 1.0) {
      String idle = a.measured()
          ? String.format(Locale.ROOT, "%s measured idle %.1f/s", g.sizes(), a.measuredThroughputPerSecond())
          : a.interferenceFactor() == 1.0 ? String.format(Locale.ROOT, "%s predicted %.1f/s", g.sizes(), g.throughputPerSecond())
          : String.format(Locale.ROOT, "%s predicted %.1f/s x interference %.2f", g.sizes(), g.throughputPerSecond(),
              a.interferenceFactor());
      return String.format(Locale.ROOT, "%s x serving %.2f = %.1f/s", idle, a.servingFactor(),
          a.expectedThroughputPerSecond());
    }
    if (a.measured()) {
      return String.format(Locale.ROOT, "%s measured%s %.1f/s (predicted %.1f/s)", g.sizes(),
          a.source() == MeasurementSource.SERVING ? " from serving" : "", a.expectedThroughputPerSecond(),
          g.throughputPerSecond());
    }
    if (a.interferenceFactor() == 1.0) {
      return String.format(Locale.ROOT, "%s predicted %.1f/s (not measured in grouping mode)", g.sizes(),
          g.throughputPerSecond());
    }
    return String.format(Locale.ROOT, "%s predicted %.1f/s x interference %.2f for %d partitions = %.1f/s",
        g.sizes(), g.throughputPerSecond(), a.interferenceFactor(), g.partitions(), a.expectedThroughputPerSecond());
  }
}

package io.partita.bench;

import io.partita.planning.bench.Problems;
import io.partita.planning.grouping.GroupingPlanner;
import io.partita.planning.grouping.GroupingProblem;
import io.partita.planning.mapping.MappingPlanner;
import io.partita.planning.mapping.MappingProblem;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * How fast the pure planners plan, timed in this run (warm-up, then the median of repeated plans).
 * The JMH figures in docs/internals/planning.md are the careful measurement; these repeat them here so
 * every figure in BENCHMARKS.md comes from one run on one machine.
 */
final class PlanningBench {
  private PlanningBench() {}

  record Timing(String what, double medianMs, int runs) {}

  static Timing time(String what, int warmups, int runs, Supplier<?> plan) {
    for (int i = 0; i < warmups; i++) {
      plan.get();
    }
    long[] ns = new long[runs];
    for (int i = 0; i < runs; i++) {
      long t0 = System.nanoTime();
      plan.get();
      ns[i] = System.nanoTime() - t0;
    }
    Arrays.sort(ns);
    return new Timing(what, ns[runs / 2] / 1e6, runs);
  }

  static Timing grouping(boolean quick) {
    GroupingProblem problem = Problems.grouping(1024, 64, 0, 0, 1L << 40, 1);
    return time("grouping: 1024 resources, 64 measured sizes", quick ? 3 : 20, quick ? 5 : 50, () -> GroupingPlanner.plan(problem));
  }

  static Timing groupingCapped(boolean quick) {
    GroupingProblem problem = Problems.grouping(1024, 64, 1 << 20, 64L << 20, 1L << 40, 1);
    return time("grouping: same, buffers cap it at 64 partitions", quick ? 2 : 10, quick ? 3 : 20, () -> GroupingPlanner.plan(problem));
  }

  static Timing mapping(boolean quick) {
    MappingProblem problem = Problems.mapping(200, 32, 20, 1, 10);
    return time("mapping: 200 models on 32 resources", quick ? 1 : 5, quick ? 3 : 15, () -> MappingPlanner.plan(problem));
  }
}

package io.partita.planning.bench;

import io.partita.planning.mapping.ExactMapping;
import io.partita.planning.mapping.MappingPlan;
import io.partita.planning.mapping.MappingPlanner;
import io.partita.planning.mapping.MappingProblem;
import io.partita.planning.mapping.MappingScheme;
import java.util.Arrays;
import java.util.Random;

/**
 * The heuristic's cost over the exact optimum on random small instances (not a JMH benchmark, and
 * not a test: run it by hand, see docs/internals/planning.md). Arguments: instance count (1000), seed (1).
 * Instances: 4 to 10 models in services of up to 4, on 3 to 6 resources.
 */
public final class MappingGapEvaluation {

  private MappingGapEvaluation() {}

  public static void main(String[] args) {
    int count = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    long seed = args.length > 1 ? Long.parseLong(args[1]) : 1;
    Random random = new Random(seed);
    double[] chosen = new double[count];
    double[] perService = new double[count];
    double[] modelFirst = new double[count];
    double[] hardwareFirst = new double[count];
    long nodes = 0;
    long start = System.nanoTime();
    for (int i = 0; i < count; i++) {
      int models = 4 + random.nextInt(7);
      int resources = 3 + random.nextInt(4);
      MappingProblem p = Problems.mapping(models, resources, 1 + random.nextInt(4), random.nextLong(), 10);
      MappingPlan plan = MappingPlanner.plan(p);
      ExactMapping exact = plan.exact();
      if (!exact.computed()) {
        throw new IllegalStateException("exact optimum not computed: " + exact.reason());
      }
      nodes += exact.nodesExplored();
      chosen[i] = exact.gap();
      perService[i] = plan.improvement().schemesCostMsPerSecond() / exact.costMsPerSecond();
      modelFirst[i] = MappingPlanner.runScheme(p, MappingScheme.MODEL_FIRST).costMsPerSecond()
          / exact.costMsPerSecond();
      hardwareFirst[i] = MappingPlanner.runScheme(p, MappingScheme.HARDWARE_FIRST).costMsPerSecond()
          / exact.costMsPerSecond();
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    System.out.printf("instances=%d seed=%d time=%d ms mean B&B nodes=%d%n", count, seed, millis, nodes / count);
    report("plan (schemes + improvement pass)", chosen);
    report("per-service choice, no improvement", perService);
    report("model-first only", modelFirst);
    report("hardware-first only", hardwareFirst);
  }

  private static void report(String name, double[] ratios) {
    double[] sorted = ratios.clone();
    Arrays.sort(sorted);
    long within = Arrays.stream(sorted).filter(r -> r <= 1.05 + 1e-9).count();
    long optimal = Arrays.stream(sorted).filter(r -> r <= 1 + 1e-9).count();
    System.out.printf("%-34s optimal %5.1f%%  <=1.05 %5.1f%%  median %.4f  p95 %.4f  max %.4f%n", name,
        100.0 * optimal / sorted.length, 100.0 * within / sorted.length, sorted[sorted.length / 2],
        sorted[(int) Math.ceil(0.95 * sorted.length) - 1], sorted[sorted.length - 1]);
  }
}

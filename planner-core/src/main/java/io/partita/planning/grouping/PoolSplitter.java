package io.partita.planning.grouping;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits one pool between several models in proportion to their demand, then groups each share
 * with {@link GroupingPlanner} (docs/concepts.md, method 1, "several models on one pool").
 *
 * <p><b>Formula.</b> With demands {@code d_m} and {@code D = sum_m d_m}, model {@code m} gets
 * {@code n_m = floor(N * d_m / D)} resources, and the {@code N - sum_m n_m} resources left over go
 * one each to the largest remainders {@code N * d_m / D - n_m} (ties to the smaller model id). Its
 * memory and buffer threshold are the same fraction {@code n_m / N} of the pool's, rounded down. A
 * model with zero demand gets nothing. When {@code D = 0} (no demand at all), the pool is split
 * evenly, so that a plan still exists. The unmet demand of a model is
 * {@code max(0, d_m - X(G_m))} where {@code X(G_m)} is its grouping's throughput.
 *
 * <p><b>Guarantees.</b> {@code sum_m n_m = N} when {@code D > 0}; deterministic; independent of the
 * order of the models. It does not move resources from a model whose demand is met to one whose is
 * not: the split is proportional, as the design asks, and the shortfall is reported.
 */
public final class PoolSplitter {

  private PoolSplitter() {}

  public static PoolSplitPlan split(PoolSplitProblem problem) {
    List<ModelDemand> models = problem.models();
    int n = problem.poolSize();
    double total = models.stream().mapToDouble(ModelDemand::requestsPerSecond).sum();
    int count = models.size();
    double[] exact = new double[count];
    for (int i = 0; i < count; i++) {
      exact[i] = total > 0 ? n * models.get(i).requestsPerSecond() / total : (double) n / count;
    }
    int[] given = new int[count];
    int left = n;
    for (int i = 0; i < count; i++) {
      given[i] = (int) Math.floor(exact[i]);
      left -= given[i];
    }
    while (left > 0) {
      int pick = -1;
      for (int i = 0; i < count; i++) {
        boolean wants = total > 0 ? models.get(i).requestsPerSecond() > 0 : true;
        if (!wants) {
          continue;
        }
        double rem = exact[i] - given[i];
        if (pick < 0 || rem > exact[pick] - given[pick]) {
          pick = i;
        }
      }
      given[pick]++;
      left--;
    }
    List<ModelShare> shares = new ArrayList<>();
    double unmet = 0;
    for (int i = 0; i < count; i++) {
      ModelDemand m = models.get(i);
      long memory = fraction(problem.poolMemoryBytes(), given[i], n);
      long threshold = fraction(problem.bufferThresholdBytes(), given[i], n);
      GroupingPlan plan;
      if (given[i] == 0) {
        plan = new GroupingPlan(m.modelId(), problem.objective(), null, List.of(), List.of(), 0,
            "the model's share of the pool is 0 resources (demand " + m.requestsPerSecond()
                + " of " + total + " req/s)", "none");
      } else {
        plan = GroupingPlanner.plan(new GroupingProblem(m.modelId(), given[i], memory, m.batchSize(),
            m.profile(), problem.bufferBytesPerPartition(), threshold, m.sloMs(), problem.objective()));
      }
      double throughput = plan.planned() ? plan.choice().throughputPerSecond() : 0;
      double shortfall = Math.max(0, m.requestsPerSecond() - throughput);
      unmet += shortfall;
      shares.add(new ModelShare(m.modelId(), m.requestsPerSecond(), given[i], memory, threshold, plan,
          throughput, shortfall));
    }
    return new PoolSplitPlan(shares, unmet, unmet == 0);
  }

  /** {@code floor(whole * part / of)} exactly (a double loses the low bits of large byte counts). */
  private static long fraction(long whole, int part, int of) {
    return BigInteger.valueOf(whole).multiply(BigInteger.valueOf(part)).divide(BigInteger.valueOf(of)).longValueExact();
  }
}

package io.partita.planning.grouping;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Places every model that wants a pool on it, whatever the count of its resources: the measured
 * models split the pool by demand ({@link PoolSplitter}), the models not measured yet get a default
 * single-resource partition, and a model the split leaves without a resource shares resources with
 * the others instead of being left out.
 *
 * <p><b>Rules.</b> With {@code N} resources, {@code d} models not measured and {@code m} measured:
 * <ul>
 *   <li>each of the {@code d} default models gets one resource of its own while {@code d < N}
 *       (the measured models then split the other {@code N - d}); when {@code d >= N} every
 *       default model gets one shared resource and the measured models split the whole pool;</li>
 *   <li>when no measured model wants the pool, the default models share it all instead: each gets
 *       {@code N / d} single-resource partitions (the first {@code N mod d}, by model id, one more),
 *       at most {@code defaultPartitionsLimit} each, so a fresh host serves on all its cores from
 *       the start (the measured plan usually keeps them) without loading a model it never measured
 *       onto every core of a large pool;</li>
 *   <li>a measured model whose share of the split is 0 resources, or whose share admits no
 *       grouping, is planned on a partition of its smallest measured size {@code s <= N}
 *       (grouped by {@link GroupingPlanner} as if the pool had {@code s} resources and its memory),
 *       on resources other models use too: {@link PoolPlacement.Kind#SHARED}. Only when even that
 *       has no eligible grouping (memory, latency objective) is it left unplanned, with the reason.</li>
 * </ul>
 * Which resources a shared partition lands on is the layout's business ({@link CoreLayout}), which
 * spreads overlapping partitions by their load.
 *
 * <p>Deterministic and independent of the input order. It keeps {@link PoolSplitter}'s result for
 * every model the split served, so adding this step changed no plan that used to place every model.
 */
public final class PoolSharing {

  private PoolSharing() {}

  /**
   * @param measured the models measured on this pool, with their demand and profile (may be empty)
   * @param unmeasured the models that want the pool but were not measured on this host yet
   * @return one placement per model, ordered by model id
   */
  public static List<PoolPlacement> split(int poolSize, long poolMemoryBytes, long bufferBytesPerPartition,
      long bufferThresholdBytes, GroupingObjective objective, List<ModelDemand> measured, Set<String> unmeasured) {
    return split(poolSize, poolMemoryBytes, bufferBytesPerPartition, bufferThresholdBytes, objective, measured, unmeasured, 1);
  }

  /**
   * As above, with the default models of a pool no measured model wants sharing it all, at most
   * {@code defaultPartitionsLimit} single-resource partitions each (see the class comment).
   */
  public static List<PoolPlacement> split(int poolSize, long poolMemoryBytes, long bufferBytesPerPartition,
      long bufferThresholdBytes, GroupingObjective objective, List<ModelDemand> measured, Set<String> unmeasured,
      int defaultPartitionsLimit) {
    if (poolSize <= 0) {
      throw new IllegalArgumentException("poolSize: must be > 0, was " + poolSize);
    }
    if (defaultPartitionsLimit <= 0) {
      throw new IllegalArgumentException("defaultPartitionsLimit: must be > 0, was " + defaultPartitionsLimit);
    }
    List<PoolPlacement> out = new ArrayList<>();
    Set<String> defaults = new TreeSet<>(unmeasured);
    measured.forEach(m -> defaults.remove(m.modelId()));
    int own = defaults.size() < poolSize ? defaults.size() : 0;
    int left = poolSize - own;
    long memoryEach = poolMemoryBytes / Math.max(1, defaults.size() + measured.size());
    boolean wholePool = measured.isEmpty() && own > 0;
    int index = 0;
    for (String model : defaults) {
      int partitions = 1;
      if (wholePool) {
        partitions = Math.min(defaultPartitionsLimit, poolSize / own + (index < poolSize % own ? 1 : 0));
      }
      index++;
      String why = partitions == 1 ? "nothing measured yet on this host: a default single-resource partition"
          : "nothing measured yet on this host: " + partitions + " default single-resource partitions";
      out.add(new PoolPlacement(model, PoolPlacement.Kind.DEFAULT, new ModelShare(model, 0, partitions, memoryEach, 0,
          new GroupingPlan(model, objective, null, List.of(), List.of(), 1, why, "default"), 0, 0)));
    }
    if (!measured.isEmpty()) {
      long splitMemory = own == 0 ? poolMemoryBytes : (long) Math.floor((double) poolMemoryBytes * left / poolSize);
      PoolSplitPlan split = PoolSplitter.split(new PoolSplitProblem(left, splitMemory, bufferBytesPerPartition,
          bufferThresholdBytes, objective, measured));
      for (ModelShare share : split.shares()) {
        if (share.resources() > 0 && share.plan().planned()) {
          out.add(new PoolPlacement(share.modelId(), PoolPlacement.Kind.SPLIT, share));
          continue;
        }
        ModelDemand demand = measured.stream().filter(m -> m.modelId().equals(share.modelId())).findFirst().orElseThrow();
        out.add(shared(demand, share, poolSize, poolMemoryBytes, bufferBytesPerPartition, bufferThresholdBytes, objective));
      }
    }
    out.sort(Comparator.comparing(PoolPlacement::modelId));
    return List.copyOf(out);
  }

  private static PoolPlacement shared(ModelDemand m, ModelShare split, int poolSize, long poolMemoryBytes,
      long bufferBytesPerPartition, long bufferThresholdBytes, GroupingObjective objective) {
    int smallest = m.profile().stream().mapToInt(ProfilePoint::size).filter(s -> s <= poolSize).min().orElse(0);
    if (smallest == 0) {
      return new PoolPlacement(m.modelId(), PoolPlacement.Kind.SHARED, split);
    }
    GroupingPlan plan = GroupingPlanner.plan(new GroupingProblem(m.modelId(), smallest, poolMemoryBytes, m.batchSize(),
        m.profile(), bufferBytesPerPartition, bufferThresholdBytes, m.sloMs(), objective));
    if (!plan.planned()) {
      return new PoolPlacement(m.modelId(), PoolPlacement.Kind.SHARED, split);
    }
    double throughput = plan.choice().throughputPerSecond();
    return new PoolPlacement(m.modelId(), PoolPlacement.Kind.SHARED, new ModelShare(m.modelId(), m.requestsPerSecond(),
        smallest, poolMemoryBytes, bufferThresholdBytes, plan, throughput,
        Math.max(0, m.requestsPerSecond() - throughput)));
  }
}

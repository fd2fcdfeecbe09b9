package io.partita.planning.grouping;

import java.util.List;

/**
 * A pool split between models: each model's share and grouping, and the total unmet demand.
 *
 * @param shares one per model, ordered by model id
 * @param unmetRequestsPerSecond sum of the shares' unmet demand
 * @param fullyServed whether every model's demand is met
 */
public record PoolSplitPlan(List<ModelShare> shares, double unmetRequestsPerSecond, boolean fullyServed) {
  public PoolSplitPlan {
    shares = List.copyOf(shares);
  }
}

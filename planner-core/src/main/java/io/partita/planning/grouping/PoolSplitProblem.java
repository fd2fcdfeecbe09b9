package io.partita.planning.grouping;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A pool shared by several models: the pool's resources, memory and buffer threshold, and each
 * model's demand and profile.
 */
public record PoolSplitProblem(
    int poolSize,
    long poolMemoryBytes,
    long bufferBytesPerPartition,
    long bufferThresholdBytes,
    GroupingObjective objective,
    List<ModelDemand> models) {

  public PoolSplitProblem {
    if (poolSize <= 0) {
      throw new IllegalArgumentException("poolSize: must be > 0, was " + poolSize);
    }
    if (models == null || models.isEmpty()) {
      throw new IllegalArgumentException("models: must hold at least one model");
    }
    Set<String> ids = new HashSet<>();
    for (ModelDemand m : models) {
      if (!ids.add(m.modelId())) {
        throw new IllegalArgumentException("models: model " + m.modelId() + " is given twice");
      }
    }
    List<ModelDemand> sorted = new ArrayList<>(models);
    sorted.sort(Comparator.comparing(ModelDemand::modelId));
    models = List.copyOf(sorted);
  }
}

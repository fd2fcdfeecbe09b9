package io.partita.planning.grouping;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The input of {@link GroupingPlanner}: one model version's profile on one pool of {@code poolSize}
 * alike resources, and the constraints a grouping must meet.
 *
 * @param modelId the model (version) the profile belongs to, only echoed into the plan
 * @param poolSize {@code N}, the number of resources in the pool
 * @param poolMemoryBytes the memory all instances of the grouping share; {@code sum_i M(k_i)} must
 *     fit in it
 * @param batchSize {@code b}, the batch size the profile was measured with
 * @param profile the measured sizes; at most one point per size
 * @param bufferBytesPerPartition the inter-partition buffer each partition needs; 0 = none
 * @param bufferThresholdBytes the limit on {@code partitions * bufferBytesPerPartition}
 * @param sloMs per-partition latency objective, or {@code null} for none
 * @param objective what to optimise
 */
public record GroupingProblem(
    String modelId,
    int poolSize,
    long poolMemoryBytes,
    int batchSize,
    List<ProfilePoint> profile,
    long bufferBytesPerPartition,
    long bufferThresholdBytes,
    Double sloMs,
    GroupingObjective objective) {

  /**
   * The largest pool the exact programs accept: their tables hold {@code N + 1} (one-dimensional)
   * or {@code (P + 1) * (N + 1)} (two-dimensional) entries and take up to {@code O(P * N * K)}
   * steps, about a second at this bound. A larger pool gets "no eligible grouping" saying so.
   */
  public static final int MAX_POOL_SIZE = 1024;

  public GroupingProblem {
    if (modelId == null || modelId.isBlank()) {
      throw new IllegalArgumentException("modelId: must not be blank");
    }
    if (poolSize <= 0) {
      throw new IllegalArgumentException("poolSize: must be > 0, was " + poolSize);
    }
    if (poolMemoryBytes < 0) {
      throw new IllegalArgumentException("poolMemoryBytes: must be >= 0, was " + poolMemoryBytes);
    }
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize: must be > 0, was " + batchSize);
    }
    if (bufferBytesPerPartition < 0) {
      throw new IllegalArgumentException("bufferBytesPerPartition: must be >= 0");
    }
    if (bufferThresholdBytes < 0) {
      throw new IllegalArgumentException("bufferThresholdBytes: must be >= 0");
    }
    if (sloMs != null && !(sloMs > 0)) {
      throw new IllegalArgumentException("sloMs: must be > 0 when given, was " + sloMs);
    }
    if (objective == null) {
      throw new IllegalArgumentException("objective: must be given");
    }
    if (profile == null || profile.isEmpty()) {
      throw new IllegalArgumentException("profile: must hold at least one measured size");
    }
    Set<Integer> seen = new HashSet<>();
    for (ProfilePoint p : profile) {
      if (!seen.add(p.size())) {
        throw new IllegalArgumentException("profile: size " + p.size() + " is given twice");
      }
    }
    // Canonical order, so that the order of the input never matters.
    List<ProfilePoint> sorted = new ArrayList<>(profile);
    sorted.sort(Comparator.comparingInt(ProfilePoint::size));
    profile = List.copyOf(sorted);
  }

  /**
   * The most partitions the buffer threshold allows: {@code floor(threshold / buffer)}, or
   * {@code poolSize} when partitions need no buffer (a grouping never has more partitions than
   * resources).
   */
  public int maxPartitionsByBuffer() {
    if (bufferBytesPerPartition == 0) {
      return poolSize;
    }
    return (int) Math.min(poolSize, bufferThresholdBytes / bufferBytesPerPartition);
  }

  /** The same problem with another objective. */
  public GroupingProblem withObjective(GroupingObjective other) {
    return new GroupingProblem(modelId, poolSize, poolMemoryBytes, batchSize, profile,
        bufferBytesPerPartition, bufferThresholdBytes, sloMs, other);
  }
}

package io.partita.planning.grouping;

/**
 * One model's part of a split pool.
 *
 * @param modelId the model
 * @param requestsPerSecond its demand
 * @param resources the resources it was given
 * @param memoryBytes the pool memory it was given
 * @param bufferThresholdBytes the part of the buffer threshold it was given
 * @param plan the grouping of its share (may say "no eligible grouping")
 * @param predictedThroughputPerSecond the plan's throughput, 0 without a plan
 * @param unmetRequestsPerSecond {@code max(0, demand - predicted throughput)}: demand this split
 *     cannot serve, reported rather than hidden
 */
public record ModelShare(
    String modelId,
    double requestsPerSecond,
    int resources,
    long memoryBytes,
    long bufferThresholdBytes,
    GroupingPlan plan,
    double predictedThroughputPerSecond,
    double unmetRequestsPerSecond) {}

package io.partita.profiler.measure;

import java.util.List;

/**
 * A whole grouping measured at once: its partitions ran concurrently, each its own session pinned
 * to its own cores, for the same time window.
 *
 * @param sizes the grouping, e.g. [1, 1]
 * @param partitions one result per partition, in the order of {@code sizes}
 * @param aggregateThroughput items per second summed over the partitions
 * @param memoryBytes resident memory all instances together added; -1 when unknown
 */
public record GroupingResult(
    String model,
    String version,
    String host,
    String pool,
    List<Integer> sizes,
    int batch,
    String provider,
    List<TimingResult> partitions,
    double aggregateThroughput,
    long memoryBytes,
    boolean ok,
    String error) {

  public GroupingResult {
    sizes = List.copyOf(sizes);
    partitions = List.copyOf(partitions);
  }
}

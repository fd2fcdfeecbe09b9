package io.partita.planning.grouping;

import java.util.List;

/**
 * One grouping with its predicted figures.
 *
 * @param sizes the partition sizes, sorted descending
 * @param partitions {@code p}, the number of partitions
 * @param resourcesUsed {@code sum_i k_i}
 * @param throughputPerSecond {@code sum_i b * 1000 / T(k_i)} inferences per second ({@code T} in ms),
 *     summed in the order of {@code sizes} so that the figure is reproducible
 * @param maxLatencyMs {@code max_i T(k_i)}
 * @param memoryBytes {@code sum_i M(k_i)}
 */
public record Grouping(
    List<Integer> sizes,
    int partitions,
    int resourcesUsed,
    double throughputPerSecond,
    double maxLatencyMs,
    long memoryBytes) {

  public Grouping {
    sizes = List.copyOf(sizes);
  }
}

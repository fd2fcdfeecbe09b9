package io.partita.planning;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A whole grouping measured at once (grouping mode: every partition running together on the same
 * pool), as opposed to the sum of single-size points measured one at a time.
 *
 * @param sizes the partition sizes, sorted descending
 * @param throughputPerSecond the aggregate throughput measured, inferences per second
 * @param maxLatencyMs the largest median latency among the partitions
 */
public record GroupingMeasurement(List<Integer> sizes, double throughputPerSecond, double maxLatencyMs) {
  public GroupingMeasurement {
    if (sizes == null || sizes.isEmpty()) {
      throw new IllegalArgumentException("sizes: a measured grouping has at least one partition");
    }
    List<Integer> sorted = new ArrayList<>(sizes);
    sorted.sort(Comparator.reverseOrder());
    sizes = List.copyOf(sorted);
    if (!(throughputPerSecond >= 0) || Double.isInfinite(throughputPerSecond)) {
      throw new IllegalArgumentException("throughputPerSecond: must be a finite number >= 0, was " + throughputPerSecond);
    }
    if (!(maxLatencyMs >= 0) || Double.isInfinite(maxLatencyMs)) {
      throw new IllegalArgumentException("maxLatencyMs: must be a finite number >= 0, was " + maxLatencyMs);
    }
  }
}

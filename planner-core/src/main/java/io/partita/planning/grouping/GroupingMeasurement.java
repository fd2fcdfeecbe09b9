package io.partita.planning.grouping;

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
 * @param source who measured it: the profiler running the grouping on purpose, or the planner
 *     reading what the serving slots of the grouping ran ({@link ServingRate})
 */
public record GroupingMeasurement(List<Integer> sizes, double throughputPerSecond, double maxLatencyMs,
    MeasurementSource source) {

  /** A measurement by the profiler. */
  public GroupingMeasurement(List<Integer> sizes, double throughputPerSecond, double maxLatencyMs) {
    this(sizes, throughputPerSecond, maxLatencyMs, MeasurementSource.PROFILER);
  }

  public GroupingMeasurement {
    if (source == null) {
      throw new IllegalArgumentException("source: must be given (PROFILER or SERVING)");
    }
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

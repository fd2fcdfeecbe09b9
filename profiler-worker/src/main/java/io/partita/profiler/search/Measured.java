package io.partita.profiler.search;

/**
 * A grid point and the throughput measured there (items per second; higher is better). A point
 * whose measurement failed has {@code NaN}, which never counts as better than anything.
 */
public record Measured(GridPoint point, double throughput) {

  public boolean failed() {
    return Double.isNaN(throughput);
  }
}

package io.partita.profiler.stats;

import java.util.Arrays;

/**
 * Summary of one set of latency samples, in nanoseconds.
 *
 * <p>Percentiles use the nearest-rank definition: the p-th percentile is the smallest sample such
 * that at least p percent of the samples are at or below it. No interpolation, so every reported
 * percentile is a latency that was actually observed, and p50 &lt;= p90 &lt;= p99 always holds.
 */
public record LatencySummary(int samples, long p50Nanos, long p90Nanos, long p99Nanos, double meanNanos,
                             long minNanos, long maxNanos, long totalNanos) {

  public LatencySummary {
    if (samples <= 0) {
      throw new IllegalArgumentException("a summary needs at least one sample, got " + samples);
    }
  }

  /** Summarises the given samples (not modified). */
  public static LatencySummary of(long[] samplesNanos) {
    long[] sorted = samplesNanos.clone();
    Arrays.sort(sorted);
    return ofSorted(sorted);
  }

  /** Summarises samples that are already sorted ascending. */
  public static LatencySummary ofSorted(long[] sorted) {
    if (sorted.length == 0) {
      throw new IllegalArgumentException("a summary needs at least one sample, got none");
    }
    long total = 0;
    for (long s : sorted) {
      total += s;
    }
    return new LatencySummary(sorted.length, percentile(sorted, 50), percentile(sorted, 90),
        percentile(sorted, 99), (double) total / sorted.length, sorted[0], sorted[sorted.length - 1], total);
  }

  /**
   * Nearest-rank percentile of sorted samples: the sample at 1-based rank ceil(p/100 * n).
   *
   * @param percent in (0, 100]
   */
  public static long percentile(long[] sorted, double percent) {
    if (sorted.length == 0) {
      throw new IllegalArgumentException("percentile of no samples");
    }
    if (!(percent > 0 && percent <= 100)) {
      throw new IllegalArgumentException("percent must be in (0, 100], got " + percent);
    }
    int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
    return sorted[Math.max(1, rank) - 1];
  }

  public double p50Millis() {
    return p50Nanos / 1e6;
  }

  public double p90Millis() {
    return p90Nanos / 1e6;
  }

  public double p99Millis() {
    return p99Nanos / 1e6;
  }

  public double meanMillis() {
    return meanNanos / 1e6;
  }
}

package io.partita.profiler.stats;

/**
 * When a median is stable enough to stop sampling.
 *
 * <p>The 95% confidence interval of the median is distribution-free: with {@code n} sorted samples
 * it runs from the sample at 1-based rank {@code round(n/2 - z*sqrt(n)/2)} to the one at rank
 * {@code round(1 + n/2 + z*sqrt(n)/2)} with {@code z = 1.96} (the binomial order-statistic interval,
 * normal approximation). Latencies are skewed and have outliers, so an interval built on the mean
 * and standard deviation would be wrong exactly when it matters; this one assumes nothing about the
 * distribution. The median is stable when the whole interval lies within
 * {@code +-relativeHalfWidth} of the median and at least {@code minSamples} were taken.
 *
 * @param relativeHalfWidth e.g. 0.05 for +-5%
 * @param minSamples never stable with fewer samples than this (at least 6, below which the
 *     interval's lower rank does not exist)
 */
public record StabilityRule(double relativeHalfWidth, int minSamples) {

  /** The stability rule (docs/internals/profiler.md): the median's 95% interval within +-5%, from 10 samples on. */
  public static final StabilityRule DEFAULT = new StabilityRule(0.05, 10);

  static final double Z_95 = 1.959964;

  public StabilityRule {
    if (!(relativeHalfWidth > 0 && relativeHalfWidth < 1)) {
      throw new IllegalArgumentException("relativeHalfWidth must be in (0, 1), got " + relativeHalfWidth);
    }
    if (minSamples < 6) {
      throw new IllegalArgumentException("minSamples must be at least 6, got " + minSamples);
    }
  }

  /** The median and its 95% interval, all observed samples. */
  public record MedianInterval(long lower, long median, long upper) {}

  /** The 95% interval of the median of sorted samples; needs at least 6 samples. */
  public static MedianInterval medianInterval(long[] sorted) {
    int n = sorted.length;
    if (n < 6) {
      throw new IllegalArgumentException("the median's interval needs at least 6 samples, got " + n);
    }
    double half = Z_95 * Math.sqrt(n) / 2.0;
    int lowerRank = (int) Math.max(1, Math.round(n / 2.0 - half));
    int upperRank = (int) Math.min(n, Math.round(1 + n / 2.0 + half));
    return new MedianInterval(sorted[lowerRank - 1], LatencySummary.percentile(sorted, 50), sorted[upperRank - 1]);
  }

  /** Whether the median of these sorted samples is stable under this rule. */
  public boolean isStable(long[] sorted) {
    if (sorted.length < minSamples) {
      return false;
    }
    MedianInterval interval = medianInterval(sorted);
    double median = interval.median();
    return interval.lower() >= median * (1 - relativeHalfWidth)
        && interval.upper() <= median * (1 + relativeHalfWidth);
  }
}

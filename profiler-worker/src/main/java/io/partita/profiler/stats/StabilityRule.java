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

  /** How many consecutive blocks {@link #isRateStable} cuts the timed runs into. */
  public static final int RATE_BLOCKS = 10;

  /**
   * How close the rate must be known: the 95 % interval of the mean time per run within +-10 %.
   * Wider than the median's +-5 %, because under a quota the rate itself moves with whatever else
   * the quota's cores run (measured on a 0.6-core quota of a shared core: block means 10-15 % apart
   * over 9 s), and the same as the planner's default hysteresis, the smallest difference that moves a
   * plan: a point known to within it is as good as the planner can use.
   */
  public static final double RATE_RELATIVE_HALF_WIDTH = 0.10;

  /** Student's t at 95 % (two-sided) for {@code RATE_BLOCKS - 1} degrees of freedom. */
  static final double T_95_9 = 2.262157;

  /**
   * Whether the mean time per run, the figure a throughput is made of, is stable: the runs, in the
   * order taken, are cut into {@link #RATE_BLOCKS} consecutive blocks of equal wall time, each at
   * least {@code minBlockNanos} long, and the 95 % interval of the mean of the blocks' mean times
   * (Student's t over the block means, the batch-means method) lies within {@link
   * #RATE_RELATIVE_HALF_WIDTH} of it.
   *
   * <p>This is the rule for a host under a CPU quota. There a run that meets the end of the
   * quota's share of a period waits out the rest of it, so with runs about as long as the share the
   * per-run times split into two modes (on a 0.6-core quota with 10 ms periods, a 3 ms model runs
   * in 3 or 7 ms, half and half): the median falls between them and never settles, while the rate
   * over blocks spanning many periods holds. The planner plans such a host by that rate (its time
   * per batch is the sustained one when it is longer than the median), so the rate is what must
   * have settled. {@code minBlockNanos} should be at least a quota period, so that a block's mean
   * does not swing with whether it holds a wait.
   *
   * @param samples the timed runs in the order taken; only the first {@code n} are read
   */
  public boolean isRateStable(long[] samples, int n, long minBlockNanos) {
    if (n < Math.max(minSamples, 2 * RATE_BLOCKS)) {
      return false;
    }
    long total = 0;
    for (int i = 0; i < n; i++) {
      total += samples[i];
    }
    if (total < RATE_BLOCKS * minBlockNanos) {
      return false;
    }
    double[] means = new double[RATE_BLOCKS];
    long elapsed = 0;
    int i = 0;
    for (int b = 0; b < RATE_BLOCKS; b++) {
      // block b takes the runs that start before (b + 1) tenths of the total time
      long end = b == RATE_BLOCKS - 1 ? Long.MAX_VALUE : (long) ((double) total * (b + 1) / RATE_BLOCKS);
      long time = 0;
      int count = 0;
      while (i < n && elapsed < end) {
        time += samples[i];
        elapsed += samples[i];
        count++;
        i++;
      }
      if (count == 0) {
        return false; // a run longer than a block: the blocks cannot show the rate's spread
      }
      means[b] = (double) time / count;
    }
    double mean = 0;
    for (double m : means) {
      mean += m / RATE_BLOCKS;
    }
    double squares = 0;
    for (double m : means) {
      squares += (m - mean) * (m - mean);
    }
    double halfWidth = T_95_9 * Math.sqrt(squares / (RATE_BLOCKS - 1)) / Math.sqrt(RATE_BLOCKS);
    return halfWidth <= RATE_RELATIVE_HALF_WIDTH * mean;
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

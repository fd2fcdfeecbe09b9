package io.partita.profiler.stats;

import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * The measuring loop: warm up, then time one trial after another until the median is stable or the
 * time budget is spent.
 *
 * <p>It reads time only through the {@link LongSupplier} clock it is given (nanoseconds, monotonic),
 * so tests drive it with a synthetic clock that the trial advances; nothing here sleeps.
 *
 * <p>Stopping early on a stable median waits for {@code samplesBeforeEarlyStop} samples (100 by
 * default, so that the reported p99 is a 99th percentile and not simply the slowest run) or for a
 * quarter of the budget, whichever comes first; slow models thus still stop early, with fewer
 * samples. A median that has not settled when the budget is spent may take up to
 * {@code unsettledBudgets} more budgets, checked as it goes: with more samples the median's interval
 * narrows, so a noisy host (a CPU quota, neighbours) still gets a point the planner can use, at the
 * cost of time only where the median did not settle. Stability is checked on a geometric schedule (each time the sample count has grown by a tenth) so that fast
 * models with tens of thousands of samples do not spend their budget sorting. On a host under a
 * CPU quota a point is also stable once its mean time per run has settled ({@link
 * StabilityRule#isRateStable}, {@link Settings#withRateBlocks}): there the quota splits the runs'
 * times into two modes and the median may never settle, while the rate the planner uses does; and
 * there no point stops before {@link #QUOTA_PERIODS_BEFORE_STOP} quota periods, so that its
 * throughput shows the quota.
 *
 * <p>It does not catch the trial's exceptions: a trial that fails is a failed measurement, and the
 * caller records it as one.
 */
public final class Sampler {

  /** One timed unit of work. */
  @FunctionalInterface
  public interface Trial {
    void run() throws Exception;
  }

  /** Why sampling stopped. */
  public enum StopReason { STABLE, BUDGET, MAX_SAMPLES }

  /**
   * @param warmupRuns untimed runs first; 0 only when the caller has already warmed up (the first
   *     run allocates and is never typical)
   * @param budgetNanos time allowed for the timed runs, measured from the first timed run
   * @param maxSamples hard cap on timed runs
   * @param rule when the median counts as stable
   * @param stopWhenStable false to use the whole budget (grouping mode, where partitions must overlap)
   * @param samplesBeforeEarlyStop samples needed before a stable median may stop sampling, unless a
   *     quarter of the budget has passed
   * @param unsettledBudgets further budgets a median that has not settled may take (only when
   *     {@code stopWhenStable}); 0 stops at the budget
   * @param rateBlockNanos 0 on a host without a CPU quota; under one, the shortest block of the
   *     rate rule ({@link StabilityRule#isRateStable}): a point also counts as stable once its mean
   *     time per run has settled, which is what the planner plans such a host by
   */
  public record Settings(int warmupRuns, long budgetNanos, int maxSamples, StabilityRule rule, boolean stopWhenStable,
                         int samplesBeforeEarlyStop, int unsettledBudgets, long rateBlockNanos) {

    /** Further budgets {@link #ofBudgetMillis} gives a median that has not settled. */
    public static final int DEFAULT_UNSETTLED_BUDGETS = 3;

    /** Settings that stop at the budget, settled or not. */
    public Settings(int warmupRuns, long budgetNanos, int maxSamples, StabilityRule rule, boolean stopWhenStable,
        int samplesBeforeEarlyStop) {
      this(warmupRuns, budgetNanos, maxSamples, rule, stopWhenStable, samplesBeforeEarlyStop, 0, 0);
    }

    public Settings {
      if (warmupRuns < 0) {
        throw new IllegalArgumentException("warmupRuns must not be negative, got " + warmupRuns);
      }
      if (budgetNanos <= 0) {
        throw new IllegalArgumentException("budgetNanos must be positive, got " + budgetNanos);
      }
      if (maxSamples < 1) {
        throw new IllegalArgumentException("maxSamples must be at least 1, got " + maxSamples);
      }
      if (rule == null) {
        throw new IllegalArgumentException("rule is required");
      }
      if (samplesBeforeEarlyStop < 0) {
        throw new IllegalArgumentException("samplesBeforeEarlyStop must not be negative, got " + samplesBeforeEarlyStop);
      }
      if (unsettledBudgets < 0) {
        throw new IllegalArgumentException("unsettledBudgets must not be negative, got " + unsettledBudgets);
      }
      if (rateBlockNanos < 0) {
        throw new IllegalArgumentException("rateBlockNanos must not be negative, got " + rateBlockNanos);
      }
    }

    /** Defaults for one measurement point with the given budget in milliseconds. */
    public static Settings ofBudgetMillis(long budgetMillis) {
      return new Settings(3, budgetMillis * 1_000_000L, 1_000_000, StabilityRule.DEFAULT, true, 100,
          DEFAULT_UNSETTLED_BUDGETS, 0);
    }

    public Settings withStopWhenStable(boolean stop) {
      return new Settings(warmupRuns, budgetNanos, maxSamples, rule, stop, samplesBeforeEarlyStop, unsettledBudgets,
          rateBlockNanos);
    }

    /** These settings with another time budget. */
    public Settings withBudgetNanos(long nanos) {
      return new Settings(warmupRuns, nanos, maxSamples, rule, stopWhenStable, samplesBeforeEarlyStop, unsettledBudgets,
          rateBlockNanos);
    }

    public Settings withWarmupRuns(int runs) {
      return new Settings(runs, budgetNanos, maxSamples, rule, stopWhenStable, samplesBeforeEarlyStop, unsettledBudgets,
          rateBlockNanos);
    }

    /** These settings on a host under a CPU quota: the rate rule too, with blocks of at least {@code blockNanos}. */
    public Settings withRateBlocks(long blockNanos) {
      return new Settings(warmupRuns, budgetNanos, maxSamples, rule, stopWhenStable, samplesBeforeEarlyStop, unsettledBudgets,
          blockNanos);
    }

    /** Whether these samples are stable: the median's rule, or under a quota also the rate's. */
    boolean stable(long[] sorted, long[] taken, int n) {
      return rule.isStable(sorted) || (rateBlockNanos > 0 && rule.isRateStable(taken, n, rateBlockNanos));
    }
  }

  /**
   * What one sampling run observed.
   *
   * @param samplesNanos the timed runs, in the order taken
   * @param elapsedNanos wall time from the first timed run's start to the last one's end
   */
  public record Outcome(long[] samplesNanos, LatencySummary summary, StopReason reason, boolean stable, long elapsedNanos) {

    /** Units of work per second when each run handles {@code itemsPerRun} items (the batch size). */
    public double throughput(int itemsPerRun) {
      return elapsedNanos <= 0 ? 0 : (double) itemsPerRun * samplesNanos.length * 1e9 / elapsedNanos;
    }
  }

  /**
   * Under a CPU quota ({@code rateBlockNanos}, one quota period, above 0) a point runs at least this
   * many periods before a stable median may stop it. A small model's first 100 runs fit inside the
   * share of one period, where they run at full speed: the point's median and its throughput then
   * both miss the quota, and the planner planned a host at a fifth of a core at 1.1 times the time
   * of one at 0.6 (demo-mlp in a cluster of processes). Over five periods the throughput holds the
   * throttled rest of each.
   */
  static final int QUOTA_PERIODS_BEFORE_STOP = 5;

  private Sampler() {}

  /** Warms up, then samples {@code trial} under {@code settings}, timing with {@code clock}. */
  public static Outcome sample(Settings settings, LongSupplier clock, Trial trial) throws Exception {
    for (int i = 0; i < settings.warmupRuns(); i++) {
      trial.run();
    }
    long[] samples = new long[Math.min(settings.maxSamples(), 1024)];
    int n = 0;
    int nextCheck = settings.rule().minSamples();
    boolean stable = false;
    StopReason reason;
    long start = clock.getAsLong();
    long end = start;
    while (true) {
      long t0 = clock.getAsLong();
      trial.run();
      long t1 = clock.getAsLong();
      end = t1;
      if (n == samples.length) {
        samples = Arrays.copyOf(samples, (int) Math.min(settings.maxSamples(), 2L * samples.length));
      }
      samples[n++] = t1 - t0;
      boolean mayStop = (n >= settings.samplesBeforeEarlyStop() || 4 * (t1 - start) >= settings.budgetNanos())
          && t1 - start >= QUOTA_PERIODS_BEFORE_STOP * settings.rateBlockNanos();
      if (settings.stopWhenStable() && mayStop && n >= nextCheck) {
        long[] sorted = Arrays.copyOf(samples, n);
        Arrays.sort(sorted);
        if (settings.stable(sorted, samples, n)) {
          stable = true;
          reason = StopReason.STABLE;
          break;
        }
        nextCheck = n + Math.max(1, n / 10);
      }
      if (n >= settings.maxSamples()) {
        reason = StopReason.MAX_SAMPLES;
        break;
      }
      if (t1 - start >= settings.budgetNanos()) {
        long extended = settings.stopWhenStable() ? settings.budgetNanos() * (1L + settings.unsettledBudgets()) : 0;
        if (t1 - start >= extended) {
          reason = StopReason.BUDGET;
          break;
        }
      }
    }
    long[] taken = Arrays.copyOf(samples, n);
    long[] sorted = taken.clone();
    Arrays.sort(sorted);
    if (!stable && n >= settings.rule().minSamples()) {
      stable = settings.stable(sorted, taken, n);
    }
    return new Outcome(taken, LatencySummary.ofSorted(sorted), reason, stable, end - start);
  }
}

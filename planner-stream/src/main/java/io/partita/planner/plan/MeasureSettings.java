package io.partita.planner.plan;

/**
 * How the planner asks profilers to measure the groupings it chooses ({@code planner.measure.*}).
 * Times are stream time (the timestamps of the records the planner has read), so a replay asks
 * exactly as the live planner did.
 *
 * @param enabled whether the planner asks at all ({@code planner.measure.enabled}, default true)
 * @param margin the runner-up is asked for too when its expected throughput is within this
 *     fraction of the choice's ({@code planner.measure.margin}, default 0.25)
 * @param intervalMs the least time between two requests for one host and pool
 *     ({@code planner.measure.interval.ms}, default 60 000): serving traffic keeps its cores
 * @param timeoutMs a request not answered in this time stops being outstanding
 *     ({@code planner.measure.timeout.ms}, default 600 000)
 * @param retryMs a grouping asked for and still not measured (its measurement failed or was
 *     unstable) is asked for again only after this time ({@code planner.measure.retry.ms}, default
 *     3 600 000)
 * @param budgetMs time budget per grouping sent with the request; 0 = the profiler's default
 *     ({@code planner.measure.budget.ms})
 * @param busyRetryMs a grouping whose measurement came back taken beside serving traffic
 *     ({@code BUSY_AFTER_WAIT}) is asked for again after this time instead of {@code retryMs}
 *     ({@code planner.measure.busy.retry.ms}, default 600 000): traffic comes and goes, so the next
 *     try may find the host idle, while a busy host's running grouping is measured from serving
 *     meanwhile and no longer asked for
 */
public record MeasureSettings(boolean enabled, double margin, long intervalMs, long timeoutMs, long retryMs,
    long budgetMs, long busyRetryMs) {

  private static final long DEFAULT_BUSY_RETRY_MS = 600_000;
  public static final MeasureSettings DEFAULTS =
      new MeasureSettings(true, 0.25, 60_000, 600_000, 3_600_000, 0, DEFAULT_BUSY_RETRY_MS);
  public static final MeasureSettings OFF =
      new MeasureSettings(false, 0.25, 60_000, 600_000, 3_600_000, 0, DEFAULT_BUSY_RETRY_MS);

  /** Settings with the default {@code busyRetryMs}. */
  public MeasureSettings(boolean enabled, double margin, long intervalMs, long timeoutMs, long retryMs, long budgetMs) {
    this(enabled, margin, intervalMs, timeoutMs, retryMs, budgetMs, DEFAULT_BUSY_RETRY_MS);
  }

  public MeasureSettings {
    if (!(margin >= 0 && margin <= 1)) {
      throw new IllegalArgumentException("planner.measure.margin: must be a number from 0 (only the choice) to 1, was "
          + margin);
    }
    if (intervalMs < 0) {
      throw new IllegalArgumentException("planner.measure.interval.ms: must be >= 0, was " + intervalMs);
    }
    if (timeoutMs < 1) {
      throw new IllegalArgumentException("planner.measure.timeout.ms: must be >= 1, was " + timeoutMs);
    }
    if (retryMs < 0) {
      throw new IllegalArgumentException("planner.measure.retry.ms: must be >= 0, was " + retryMs);
    }
    if (busyRetryMs < 0) {
      throw new IllegalArgumentException("planner.measure.busy.retry.ms: must be >= 0, was " + busyRetryMs);
    }
    if (budgetMs < 0) {
      throw new IllegalArgumentException("planner.measure.budget.ms: must be >= 0 (0 = the profiler's default), was "
          + budgetMs);
    }
  }
}

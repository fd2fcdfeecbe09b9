package io.partita.profiler.idle;

/**
 * When the profiler counts its host's serving slots as idle enough to measure, and how long it
 * waits for that.
 *
 * @param check look at the slots at all ({@code profiler.idle.check}, default on); off measures at
 *     once and records {@link MeasuringCondition#UNCHECKED}
 * @param maxInFlight requests in flight or queued, summed over the host's live slots, at or below
 *     which the slots are idle ({@code profiler.idle.max-in-flight}, default 0)
 * @param maxRate requests answered per second, summed over the host's live slots, at or below which
 *     the slots are idle ({@code profiler.idle.max-rate}, default 1.0)
 * @param waitMillis the longest a profile request waits, over all its steps together, for idle slots
 *     before measuring anyway ({@code profiler.idle.wait.ms}, default 30000; 0 = never wait)
 * @param staleMillis a slot status older than this no longer counts: its worker is taken as gone
 *     ({@code profiler.idle.stale.ms}, default 60000, several of the worker's
 *     {@code worker.status.interval.ms})
 */
public record IdleSettings(boolean check, int maxInFlight, double maxRate, long waitMillis, long staleMillis) {

  public static final int DEFAULT_MAX_IN_FLIGHT = 0;
  public static final double DEFAULT_MAX_RATE = 1.0;
  public static final long DEFAULT_WAIT_MS = 30_000;
  public static final long DEFAULT_STALE_MS = 60_000;

  public IdleSettings {
    if (maxInFlight < 0) {
      throw new IllegalArgumentException("profiler.idle.max-in-flight: must be 0 or more, got " + maxInFlight);
    }
    if (!(maxRate >= 0) || Double.isInfinite(maxRate)) {
      throw new IllegalArgumentException("profiler.idle.max-rate: must be a finite number of requests/s, 0 or more, got " + maxRate);
    }
    if (waitMillis < 0) {
      throw new IllegalArgumentException("profiler.idle.wait.ms: must be 0 or more, got " + waitMillis);
    }
    if (staleMillis < 1) {
      throw new IllegalArgumentException("profiler.idle.stale.ms: must be 1 or more, got " + staleMillis);
    }
  }

  public static IdleSettings defaults() {
    return new IdleSettings(true, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_RATE, DEFAULT_WAIT_MS, DEFAULT_STALE_MS);
  }

  public static IdleSettings off() {
    return new IdleSettings(false, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_RATE, 0, DEFAULT_STALE_MS);
  }
}

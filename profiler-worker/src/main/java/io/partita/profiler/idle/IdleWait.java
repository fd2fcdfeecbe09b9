package io.partita.profiler.idle;

/**
 * How long a profile run may wait for idle slots before each of its steps (points or groupings).
 * Pure: {@link #allowedMillis} is the whole rule.
 */
public enum IdleWait {
  /**
   * Measurements asked for ({@code profile.requests}: an operator, the planner): the wait allowed
   * ({@link IdleSettings#waitMillis()}) is a budget for the whole request; once the steps have spent
   * it, the rest only look and measure at once, so an asked-for request ends in bounded time.
   */
  PER_REQUEST,
  /**
   * Start-up profiling ({@code partita local}, {@code partita profiler --profile-at-start}): it yields
   * to serving. Before every step the whole wait is allowed again, so traffic that comes in the
   * middle of the run pauses it at the next step, and it goes on as soon as the slots are idle; a
   * step measures without idle slots only after waiting the whole of {@link IdleSettings#waitMillis()},
   * so that under traffic that never stops the profile still completes, one step per wait.
   */
  PER_STEP;

  /**
   * The wait allowed before the next step.
   *
   * @param waitMillis the setting ({@link IdleSettings#waitMillis()})
   * @param leftOfRequestMillis what the steps before left of the request's budget
   */
  public long allowedMillis(long waitMillis, long leftOfRequestMillis) {
    return this == PER_STEP ? waitMillis : Math.max(0, leftOfRequestMillis);
  }
}

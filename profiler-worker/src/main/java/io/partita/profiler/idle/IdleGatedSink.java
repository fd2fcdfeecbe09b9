package io.partita.profiler.idle;

import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileSink;
import java.util.function.Consumer;

/**
 * Before each step of one profile request, waits for the host's slots to be idle enough
 * ({@link IdleGate#await}) and remembers the condition, which the sinks after it read through
 * {@link #current()} (the timing event records it). The wait allowed is a budget for the whole
 * request: once a step has spent it, the next steps only look and measure at once, so a request
 * waits at most {@link IdleSettings#waitMillis()} in all however many points it has.
 *
 * <p>Interrupted while waiting (the profiler is closing), it restores the interrupt and lets the
 * step run; the runner stops before the next one.
 */
public final class IdleGatedSink implements ProfileSink {
  private final IdleGate gate;
  private final Consumer<IdleGate.Decision> decided;
  private long budgetMillis;
  private volatile MeasuringCondition current = MeasuringCondition.UNCHECKED;
  private ProfileSink next;

  /** @param decided told of every decision (metrics) */
  public IdleGatedSink(IdleGate gate, Consumer<IdleGate.Decision> decided) {
    this.gate = gate;
    this.decided = decided;
    this.budgetMillis = gate.settings().waitMillis();
  }

  /** Passes every call on to {@code next} after the wait; returns this sink. */
  public IdleGatedSink around(ProfileSink next) {
    this.next = next;
    return this;
  }

  /** What is left of the request's wait for idle slots. */
  public long waitLeftMillis() {
    return budgetMillis;
  }

  /** The condition the step being measured started under. */
  public MeasuringCondition current() {
    return current;
  }

  @Override
  public void starting(int done, int total, String label) {
    IdleGate.Decision d;
    try {
      d = gate.await(budgetMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      d = new IdleGate.Decision(MeasuringCondition.UNCHECKED, 0, null);
    }
    budgetMillis = Math.max(0, budgetMillis - d.waitedMillis());
    current = d.condition();
    decided.accept(d);
    next.starting(done, total, label);
  }

  @Override
  public void point(TimingResult result, int done, int total) {
    next.point(result, done, total);
  }

  @Override
  public void grouping(GroupingResult result, int done, int total) {
    next.grouping(result, done, total);
  }
}

package io.partita.profiler.idle;

import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileSink;
import java.util.function.Consumer;

/**
 * Before each step of one profile request, waits for the host's slots to be idle enough
 * ({@link IdleGate#await}) and remembers the condition, which the sinks after it read through
 * {@link #current()} (the timing event records it). How long each step may wait is the
 * {@link IdleWait}'s rule: a budget for the whole request ({@link IdleWait#PER_REQUEST}: once a step
 * has spent it, the next steps only look and measure at once, so a request waits at most
 * {@link IdleSettings#waitMillis()} in all however many points it has), or the whole wait again
 * before every step ({@link IdleWait#PER_STEP}, start-up profiling, which yields to serving).
 *
 * <p>Interrupted while waiting (the profiler is closing), it restores the interrupt and lets the
 * step run; the runner stops before the next one.
 */
public final class IdleGatedSink implements ProfileSink {
  private final IdleGate gate;
  private final IdleWait rule;
  private final Consumer<IdleGate.Decision> decided;
  private long budgetMillis;
  private volatile MeasuringCondition current = MeasuringCondition.UNCHECKED;
  private ProfileSink next;

  /** A sink for a request asked for: {@link IdleWait#PER_REQUEST}. */
  public IdleGatedSink(IdleGate gate, Consumer<IdleGate.Decision> decided) {
    this(gate, IdleWait.PER_REQUEST, decided);
  }

  /** @param decided told of every decision (metrics) */
  public IdleGatedSink(IdleGate gate, IdleWait rule, Consumer<IdleGate.Decision> decided) {
    this.gate = gate;
    this.rule = rule;
    this.decided = decided;
    this.budgetMillis = gate.settings().waitMillis();
  }

  /** Passes every call on to {@code next} after the wait; returns this sink. */
  public IdleGatedSink around(ProfileSink next) {
    this.next = next;
    return this;
  }

  /** What the next step may wait for idle slots. */
  public long waitLeftMillis() {
    return rule.allowedMillis(gate.settings().waitMillis(), budgetMillis);
  }

  /** The condition the step being measured started under. */
  public MeasuringCondition current() {
    return current;
  }

  @Override
  public void starting(int done, int total, String label) {
    IdleGate.Decision d;
    try {
      d = gate.await(waitLeftMillis());
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

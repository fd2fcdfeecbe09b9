package io.partita.profiler.idle;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Holds the host's {@link ServingLoad} as slot statuses arrive (from the status follower's thread)
 * and lets the measuring thread wait until the slots are idle enough.
 *
 * <p>{@link #await} answers at once when the check is off ({@link MeasuringCondition#UNCHECKED}),
 * when the statuses cannot be read (UNCHECKED), when no slot of the host is live
 * ({@link MeasuringCondition#NO_SERVING}) or when the live slots are idle
 * ({@link MeasuringCondition#IDLE}). Otherwise it waits, looking again at every status that
 * arrives and at least once a second (a worker that stopped publishing goes stale with time), until
 * one of those holds or the wait allowed runs out: then {@link MeasuringCondition#BUSY_AFTER_WAIT}.
 * Before the follower has read the statuses already on the topic nothing is decided; a wait that
 * ends then is UNCHECKED.
 */
public final class IdleGate {

  /** What the gate decided for one measurement, and how long it waited for it. */
  public record Decision(MeasuringCondition condition, long waitedMillis, ServingLoad.Reading reading) {}

  private static final long RECHECK_MS = 1000;

  private final IdleSettings settings;
  private final LongSupplier clock;
  private final ServingLoad load = new ServingLoad();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private boolean caughtUp;
  private String unreadable;

  /** @param clock epoch milliseconds, the clock the workers stamp their statuses with */
  public IdleGate(IdleSettings settings, LongSupplier clock) {
    this.settings = settings;
    this.clock = clock;
  }

  public IdleSettings settings() {
    return settings;
  }

  public void update(SlotLoad status) {
    signalling(() -> load.update(status));
  }

  public void remove(String slot) {
    signalling(() -> load.remove(slot));
  }

  /** Every status that was on the topic when following began has been read. */
  public void caughtUp() {
    signalling(() -> caughtUp = true);
  }

  /** The statuses cannot be read (for example no READ on the topic): measurements go on, UNCHECKED. */
  public void unreadable(String reason) {
    signalling(() -> unreadable = reason);
  }

  /** Why the statuses cannot be read, or null. */
  public String unreadableReason() {
    lock.lock();
    try {
      return unreadable;
    } finally {
      lock.unlock();
    }
  }

  /** The load now, or null before the statuses on the topic were read. */
  public ServingLoad.Reading reading() {
    lock.lock();
    try {
      return caughtUp ? load.read(clock.getAsLong(), settings) : null;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits at most {@code maxWaitMillis} for the slots to be idle enough (see the class comment).
   *
   * @throws InterruptedException the profiler is closing
   */
  public Decision await(long maxWaitMillis) throws InterruptedException {
    if (!settings.check()) {
      return new Decision(MeasuringCondition.UNCHECKED, 0, null);
    }
    long start = clock.getAsLong();
    long deadline = start + Math.max(0, maxWaitMillis);
    lock.lock();
    try {
      while (true) {
        long now = clock.getAsLong();
        if (unreadable != null) {
          return new Decision(MeasuringCondition.UNCHECKED, now - start, null);
        }
        ServingLoad.Reading reading = caughtUp ? load.read(now, settings) : null;
        if (reading != null && reading.condition() != null) {
          return new Decision(reading.condition(), now - start, reading);
        }
        long left = deadline - now;
        if (left <= 0) {
          return new Decision(reading == null ? MeasuringCondition.UNCHECKED : MeasuringCondition.BUSY_AFTER_WAIT,
              now - start, reading);
        }
        changed.await(Math.min(left, RECHECK_MS), TimeUnit.MILLISECONDS);
      }
    } finally {
      lock.unlock();
    }
  }

  private void signalling(Runnable change) {
    lock.lock();
    try {
      change.run();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }
}

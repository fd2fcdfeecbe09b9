package io.partita.common.health;

import io.partita.common.log.RateLimitedLog;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one loop does with failures, so that no single record can stop it:
 *
 * <ul>
 *   <li>{@link #skipped}: a record the loop could not handle (undecodable, invalid, or anything it
 *       threw) is counted, warned about in a summary (one line per cause per interval) and passed
 *       over; the loop goes on with the next record;
 *   <li>{@link #faulted}: the loop's own work failed (a poll, a lookup), not tied to one record: the
 *       loop is NOT_READY with the reason until its next good pass, and the caller backs off;
 *   <li>{@link #retrying}: a piece of work failed and is tried again while the loop still serves;
 *   <li>{@link #died}: the loop ended by a fault; readiness names it from then on.
 * </ul>
 *
 * A fault the process cannot survive ({@link VirtualMachineError}) ends the process through
 * {@link Fatal} in all of them. It does not restart loops. The gateway's loops and every
 * {@code io.partita.common.kafka.TopicFollower} report through one.
 */
public final class LoopGuard {
  private static final Logger log = LoggerFactory.getLogger(LoopGuard.class);
  private static final int MAX_REASON = 200;

  /** How long a loop waits after a failed poll before polling again ({@link #backOff()}). */
  public static final long BACK_OFF_MS = 1000;

  private final Loop loop;
  private final RateLimitedLog warnings;
  private final LongAdder skipped = new LongAdder();
  private final LongAdder faults = new LongAdder();

  /**
   * @param loop the loop's state, registered in the process's {@link Loops} when readiness reads it
   * @param warnings where the summarised warnings go (one per process or per loop)
   */
  public LoopGuard(Loop loop, RateLimitedLog warnings) {
    this.loop = loop;
    this.warnings = warnings;
  }

  /**
   * A guard whose loop no readiness endpoint reads (a helper thread of a service without one): its
   * warnings are summarised on {@code log}, one line per cause per minute.
   */
  public static LoopGuard unregistered(String name, Logger log) {
    return new LoopGuard(new Loop(name), new RateLimitedLog(log, 60_000));
  }

  public String name() {
    return loop.name();
  }

  public Loop loop() {
    return loop;
  }

  /**
   * Caught up enough to serve (cheap when already ready: call it on every pass). A loop declared
   * dead stays dead: only registering it again revives it.
   */
  public void ready() {
    if (loop.snapshot().state() != Loop.State.DEAD) {
      loop.ready();
    }
  }

  public void notReady(String why) {
    loop.notReady(why);
  }

  /** The loop ended on purpose (closing). */
  public void stopped() {
    loop.stopped();
  }

  /** A record this loop could not handle; it is counted and passed over. */
  public void skipped(String what, String topic, int partition, long offset, Throwable cause) {
    Fatal.haltIfFatal(name(), cause);
    skipped.increment();
    warnings.warn(name() + "/skipped/" + cause.getClass().getName(), "Loop {} passed over {} at {}-{}@{}: {}",
        name(), what, topic, partition, offset, describe(cause));
  }

  /** The loop's own work failed; NOT_READY until its next good pass. The caller backs off. */
  public void faulted(String doing, Throwable cause) {
    Fatal.haltIfFatal(name(), cause);
    faults.increment();
    loop.notReady(doing + " failed: " + describe(cause));
    warnings.warn(name() + "/faulted/" + cause.getClass().getName(), "Loop {}: {} failed, trying again: {}",
        name(), doing, describe(cause));
  }

  /**
   * Waits {@link #BACK_OFF_MS} after {@link #faulted}. A fixed wait is right here: a failing
   * broker gives no signal to wait for, and polling again at once would spin. Returns false when
   * the thread was interrupted (the interrupt is kept): the loop should stop.
   */
  public boolean backOff() {
    try {
      Thread.sleep(BACK_OFF_MS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * A piece of the loop's work failed and will be tried again, but the loop still serves (a job
   * runner that pauses, a demand report not written): counted and summarised, state unchanged.
   */
  public void retrying(String doing, Throwable cause) {
    Fatal.haltIfFatal(name(), cause);
    faults.increment();
    warnings.warn(name() + "/retrying/" + cause.getClass().getName(), "Loop {}: {} failed, will try again: {}",
        name(), doing, describe(cause));
  }

  /** The loop ended by a fault: readiness names it from now on. */
  public void died(Throwable cause) {
    Fatal.haltIfFatal(name(), cause);
    loop.died(cause);
    log.error("Loop {} died", name(), cause);
  }

  /** Tells the counts of warnings not logged one by one whose interval is over. Cheap; call it every pass. */
  public void flush() {
    warnings.flushDue();
  }

  /** Tells every count of warnings still held back (when the loop ends). */
  public void flushAll() {
    warnings.flush();
  }

  /** Records passed over since start. */
  public long skippedCount() {
    return skipped.sum();
  }

  /** Failures of the loop's own work since start. */
  public long faultCount() {
    return faults.sum();
  }

  /** A throwable's class and first line of message, cut to a sane length; never a stack trace. */
  static String describe(Throwable t) {
    String message = t.getMessage();
    String s = t.getClass().getSimpleName() + (message == null ? "" : ": " + message.lines().findFirst().orElse(""));
    return s.length() > MAX_REASON ? s.substring(0, MAX_REASON) + "..." : s;
  }
}

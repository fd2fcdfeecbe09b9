package io.partita.common.log;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;

/**
 * Warnings of one cause, summarised: the first occurrence of a cause in an interval is logged at
 * WARN as it is; the others in the same interval are only counted, and the count is told with the
 * next line of that cause after the interval ({@link Telling}), by {@link #flushDue()} once the
 * interval is over, or by {@link #flush()} at close. So 5,000 undecodable records in a minute give a
 * handful of lines, not 5,000, and nothing is lost from the count.
 *
 * <p>A cause is a short, stable key chosen by the caller ({@code "undecodable request"},
 * {@code "gateway-replies/skipped/..."}), never a per-record value (an offset or an id would make
 * every record its own cause). The number of causes is bounded: past {@link #MAX_CAUSES}, new causes
 * share one overflow key. Thread safe; no thread of its own.
 *
 * <p>The one rate-limited logger of Partita: the worker, the client and every loop guarded by a
 * {@link io.partita.common.health.LoopGuard} (the gateway's loops, the topic followers) use it.
 */
public final class RateLimitedLog {
  /** Most distinct causes tracked; more share one key so an attacker cannot grow the map. */
  public static final int MAX_CAUSES = 256;
  private static final String OVERFLOW = "(other causes)";

  /**
   * How a count held back is told with the next line of its cause. Two wordings are in use (the
   * worker's and client's, the gateway loops'); they are kept as they were so that no line an
   * operator searches for changes.
   */
  public enum Telling {
    /** On a line of its own before the next one: {@code 4999 more of 'c' in the last 60000 ms (held back); the latest:}. */
    OWN_LINE,
    /** At the end of the next line: {@code ... (4999 more like this in the previous 60.0 s were not logged one by one)}. */
    APPENDED
  }

  private final Logger log;
  private final long intervalMs;
  private final LongSupplier clock;
  private final Telling telling;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  private static final class Window {
    long startedMs = Long.MIN_VALUE;
    long held;
    long total;
  }

  /**
   * @param log where the lines go
   * @param intervalMs at most one line per cause per this many milliseconds
   * @param clock milliseconds (System::currentTimeMillis; tests pass their own)
   * @param telling how a count held back is told with the next line
   */
  public RateLimitedLog(Logger log, long intervalMs, LongSupplier clock, Telling telling) {
    if (intervalMs <= 0) {
      throw new IllegalArgumentException("intervalMs must be positive, was " + intervalMs);
    }
    this.log = log;
    this.intervalMs = intervalMs;
    this.clock = clock;
    this.telling = telling;
  }

  public RateLimitedLog(Logger log, long intervalMs, LongSupplier clock) {
    this(log, intervalMs, clock, Telling.OWN_LINE);
  }

  public RateLimitedLog(Logger log, long intervalMs) {
    this(log, intervalMs, System::currentTimeMillis);
  }

  /**
   * Logs {@code format} (SLF4J placeholders) at WARN unless this cause was logged less than an
   * interval ago, in which case the occurrence is only counted. Returns whether a line was written.
   * Arguments should not end in a throwable: a summarised line carries no stack trace.
   */
  public boolean warn(String cause, String format, Object... args) {
    String key = windows.size() >= MAX_CAUSES && !windows.containsKey(cause) ? OVERFLOW : cause;
    Window w = windows.computeIfAbsent(key, k -> new Window());
    long held;
    synchronized (w) {
      long now = clock.getAsLong();
      w.total++;
      if (w.startedMs != Long.MIN_VALUE && now - w.startedMs < intervalMs) {
        w.held++;
        return false;
      }
      held = w.held;
      w.held = 0;
      w.startedMs = now;
    }
    if (held == 0) {
      log.warn(format, args);
    } else if (telling == Telling.OWN_LINE) {
      log.warn("{} more of '{}' in the last {} ms (held back); the latest:", held, key, intervalMs);
      log.warn(format, args);
    } else {
      Object[] more = Arrays.copyOf(args, args.length + 2);
      more[args.length] = held;
      more[args.length + 1] = intervalMs / 1000.0;
      log.warn(format + " ({} more like this in the previous {} s were not logged one by one)", more);
    }
    return true;
  }

  /**
   * Tells the count of each cause whose interval is over and that has occurrences not told yet.
   * Cheap: a loop calls it on every pass, so a cause that stops occurring still has its count told.
   */
  public void flushDue() {
    long now = clock.getAsLong();
    List<Object[]> lines = new ArrayList<>();
    windows.forEach((cause, w) -> {
      synchronized (w) {
        if (w.held > 0 && now - w.startedMs >= intervalMs) {
          lines.add(new Object[] {w.held, cause, (now - w.startedMs) / 1000.0});
          w.held = 0;
          w.startedMs = now;
        }
      }
    });
    for (Object[] line : lines) {
      log.warn("{} more warning(s) of kind '{}' in the last {} s were not logged one by one", line);
    }
  }

  /** Logs the counts still held back, whether or not their interval is over (at close, say). */
  public void flush() {
    windows.forEach((cause, w) -> {
      long held;
      synchronized (w) {
        held = w.held;
        w.held = 0;
      }
      if (held > 0) {
        log.warn("{} more of '{}' held back", held, cause);
      }
    });
  }

  /** Occurrences of a cause counted but not logged yet. */
  public long held(String cause) {
    return count(cause, w -> w.held);
  }

  /** Occurrences of a cause in all, logged or counted. */
  public long total(String cause) {
    return count(cause, w -> w.total);
  }

  private long count(String cause, ToLongFunction<Window> what) {
    Window w = windows.get(cause);
    if (w == null) {
      return 0;
    }
    synchronized (w) {
      return what.applyAsLong(w);
    }
  }
}

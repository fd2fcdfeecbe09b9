package io.partita.common.log;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Warnings of one cause, summarised: the first occurrence of a cause in an interval is logged at
 * WARN as it is; the others in the same interval are only counted, and the next occurrence after the
 * interval logs one line with the count of those it held back. So 5,000 undecodable records in a
 * minute give a handful of lines, not 5,000, and nothing is lost from the count.
 *
 * <p>A cause is a short, stable key chosen by the caller ({@code "undecodable request"}), never a
 * per-record value (an offset or an id would make every record its own cause). The number of causes
 * is bounded: past {@link #MAX_CAUSES}, new causes share one overflow key. Thread safe; no thread of
 * its own (a held-back count is reported by the next occurrence of its cause, or by {@link #flush()}).
 */
public final class RateLimitedLog {
  /** Most distinct causes tracked; more share one key so an attacker cannot grow the map. */
  public static final int MAX_CAUSES = 256;
  private static final String OVERFLOW = "(other causes)";

  private final Logger log;
  private final long intervalMs;
  private final LongSupplier clock;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  private static final class Window {
    long startedMs;
    long held;
  }

  /**
   * @param log where the lines go
   * @param intervalMs at most one line per cause per this many milliseconds
   * @param clock milliseconds (System::currentTimeMillis; tests pass their own)
   */
  public RateLimitedLog(Logger log, long intervalMs, LongSupplier clock) {
    if (intervalMs <= 0) {
      throw new IllegalArgumentException("intervalMs must be positive, was " + intervalMs);
    }
    this.log = log;
    this.intervalMs = intervalMs;
    this.clock = clock;
  }

  public RateLimitedLog(Logger log, long intervalMs) {
    this(log, intervalMs, System::currentTimeMillis);
  }

  /**
   * Logs {@code format} (SLF4J placeholders) at WARN unless this cause was logged less than an
   * interval ago, in which case the occurrence is only counted. Returns whether a line was written.
   */
  public boolean warn(String cause, String format, Object... args) {
    String key = windows.size() >= MAX_CAUSES && !windows.containsKey(cause) ? OVERFLOW : cause;
    Window w = windows.computeIfAbsent(key, k -> {
      Window fresh = new Window();
      fresh.startedMs = Long.MIN_VALUE;
      return fresh;
    });
    long held;
    synchronized (w) {
      long now = clock.getAsLong();
      if (w.startedMs != Long.MIN_VALUE && now - w.startedMs < intervalMs) {
        w.held++;
        return false;
      }
      held = w.held;
      w.held = 0;
      w.startedMs = now;
    }
    if (held > 0) {
      log.warn("{} more of '{}' in the last {} ms (held back); the latest:", held, key, intervalMs);
    }
    log.warn(format, args);
    return true;
  }

  /** Logs the counts still held back (at close, say). */
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
    Window w = windows.get(cause);
    if (w == null) {
      return 0;
    }
    synchronized (w) {
      return w.held;
    }
  }
}

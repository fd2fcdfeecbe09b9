package io.partita.gateway.health;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Keeps warnings of one cause to one log line per interval. The first warning of a cause in an
 * interval is logged at once; later ones in the same interval are only counted, and the count is
 * told with the next line of that cause or by {@link #flush()} once the interval is over. So 5,000
 * undecodable records give a handful of lines, each saying how many were passed over.
 *
 * <p>A cause is a short name chosen by the code ({@code "gateway-replies/DecodeException"}), never
 * text from a record, so the number of causes is bounded by the code; past {@link #MAX_CAUSES}
 * distinct causes the rest share one. Thread safe. The other engineers' {@code RateLimitedLog} in
 * {@code common} does the same job for the worker; the two may be merged later.
 */
public final class WarningSummary {
  /** Most distinct causes tracked; more share the cause {@code "other"}. */
  public static final int MAX_CAUSES = 256;

  private final Logger log;
  private final long intervalMs;
  private final LongSupplier clock;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  private static final class Window {
    long start;
    long suppressed;
    long total;

    Window(long start) {
      this.start = start;
    }
  }

  /**
   * @param log where the lines go
   * @param intervalMs the interval: at most one line per cause per interval
   * @param clock epoch milliseconds (tests pass their own)
   */
  public WarningSummary(Logger log, long intervalMs, LongSupplier clock) {
    if (intervalMs <= 0) {
      throw new IllegalArgumentException("intervalMs must be > 0");
    }
    this.log = log;
    this.intervalMs = intervalMs;
    this.clock = clock;
  }

  /**
   * Warns with an SLF4J format and arguments, unless this cause already logged a line in the
   * current interval (then it is only counted). Returns whether a line was logged. Arguments should
   * not end in a throwable: a summary line carries no stack trace.
   */
  public boolean warn(String cause, String format, Object... args) {
    Window w = window(cause);
    long now = clock.getAsLong();
    long earlier;
    synchronized (w) {
      w.total++;
      if (w.total > 1 && now - w.start < intervalMs) {
        w.suppressed++;
        return false;
      }
      earlier = w.suppressed;
      w.suppressed = 0;
      w.start = now;
    }
    if (earlier == 0) {
      log.warn(format, args);
    } else {
      Object[] more = Arrays.copyOf(args, args.length + 2);
      more[args.length] = earlier;
      more[args.length + 1] = intervalMs / 1000.0;
      log.warn(format + " ({} more like this in the previous {} s were not logged one by one)", more);
    }
    return true;
  }

  /** Logs the count of each cause whose interval is over and that has warnings not yet told. */
  public void flush() {
    long now = clock.getAsLong();
    List<Object[]> lines = new ArrayList<>();
    windows.forEach((cause, w) -> {
      synchronized (w) {
        if (w.suppressed > 0 && now - w.start >= intervalMs) {
          lines.add(new Object[] {w.suppressed, cause, (now - w.start) / 1000.0});
          w.suppressed = 0;
          w.start = now;
        }
      }
    });
    for (Object[] line : lines) {
      log.warn("{} more warning(s) of kind '{}' in the last {} s were not logged one by one", line);
    }
  }

  /** How many warnings of this cause were seen in all (logged or counted). */
  public long total(String cause) {
    Window w = windows.get(cause);
    if (w == null) {
      return 0;
    }
    synchronized (w) {
      return w.total;
    }
  }

  private Window window(String cause) {
    Window w = windows.get(cause);
    if (w != null) {
      return w;
    }
    String key = windows.size() >= MAX_CAUSES ? "other" : cause;
    return windows.computeIfAbsent(key, k -> new Window(clock.getAsLong() - intervalMs));
  }
}

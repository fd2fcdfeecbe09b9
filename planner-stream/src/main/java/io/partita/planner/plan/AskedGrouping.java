package io.partita.planner.plan;

import java.nio.charset.StandardCharsets;

/**
 * When the planner asked for one grouping that is not measured yet ({@code measure-asked-store},
 * key {@link Keys#grouping}), and whether its answer came back measured beside serving traffic
 * ({@code BUSY_AFTER_WAIT}). Such an answer is not planned with, and the grouping may be asked for
 * again after {@link MeasureSettings#busyRetryMs()} instead of {@link MeasureSettings#retryMs()}:
 * traffic comes and goes, so a later try may find the host idle, and the waiting costs the host
 * nothing while the running grouping of a busy host is measured from serving meanwhile.
 *
 * <p>Stored as the decimal time, followed by {@code " busy"} when the answer was busy; a value
 * written before the busy mark existed reads as not busy.
 */
public record AskedGrouping(long askedAtMs, boolean busy) {
  private static final String BUSY = " busy";

  /** Whether it may not be asked for again yet at {@code now}. */
  public boolean recent(long now, MeasureSettings settings) {
    return now - askedAtMs < (busy ? settings.busyRetryMs() : settings.retryMs());
  }

  public AskedGrouping answeredBusy() {
    return new AskedGrouping(askedAtMs, true);
  }

  public byte[] encode() {
    return (askedAtMs + (busy ? BUSY : "")).getBytes(StandardCharsets.UTF_8);
  }

  public static AskedGrouping decode(byte[] bytes) {
    if (bytes == null) {
      return null;
    }
    String s = new String(bytes, StandardCharsets.UTF_8);
    boolean busy = s.endsWith(BUSY);
    return new AskedGrouping(Long.parseLong(busy ? s.substring(0, s.length() - BUSY.length()) : s), busy);
  }
}

package io.partita.gateway.jobs;

import java.util.ArrayDeque;
import java.util.Deque;

/** Items per second over the last {@code windowMs} of samples (time, items done so far). */
public final class RateWindow {
  private record Sample(long timeMs, long done) {}

  private final long windowMs;
  private final Deque<Sample> samples = new ArrayDeque<>();

  public RateWindow(long windowMs) {
    this.windowMs = windowMs;
  }

  public void add(long timeMs, long done) {
    samples.addLast(new Sample(timeMs, done));
    while (samples.size() > 2 && samples.getFirst().timeMs() < timeMs - windowMs) {
      samples.removeFirst();
    }
  }

  /** Items per second between the oldest and newest sample; 0 with fewer than two samples or no time between them. */
  public double rate() {
    if (samples.size() < 2) {
      return 0;
    }
    Sample first = samples.getFirst();
    Sample last = samples.getLast();
    long ms = last.timeMs() - first.timeMs();
    return ms <= 0 ? 0 : (last.done() - first.done()) * 1000.0 / ms;
  }

  /** Seconds left at the current rate, or -1 when there is no rate yet. */
  public static long etaSeconds(long remaining, double rate) {
    if (remaining <= 0) {
      return 0;
    }
    return rate <= 0 ? -1 : (long) Math.ceil(remaining / rate);
  }
}

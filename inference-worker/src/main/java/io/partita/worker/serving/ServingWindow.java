package io.partita.worker.serving;

import java.util.Arrays;
import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What one slot ran over its last window (the serving evidence of its status): the runs that
 * answered with a result, how many items (batch rows) each carried and how long each took on the
 * slot's runner, so that the planner can read the slot's service rate when busy at the batch sizes
 * it actually ran. Runs are counted in one-second buckets; a snapshot sums the buckets of the last
 * {@code windowMs} (the current, partial one included) and says which span they cover. Pure: the
 * time is passed in. Thread-safe: the slot's runner records, the status publisher reads.
 *
 * <p>Not counted: runs that failed (their time served no one), requests answered without a run
 * (deadline passed, weight file not ready).
 */
public final class ServingWindow {
  /** The window a slot reports by default. */
  public static final long DEFAULT_WINDOW_MS = 30_000;
  static final long BUCKET_MS = 1_000;

  /** The runs of one batch size. */
  public record Runs(long runs, long busyNanos) {
    Runs plus(Runs other) {
      return new Runs(runs + other.runs, busyNanos + other.busyNanos);
    }
  }

  /**
   * The window's figures.
   *
   * @param windowMs the span covered, ending at the snapshot's time (shorter than the window while
   *     the slot is younger than it)
   * @param bySize runs by items per run, ascending
   */
  public record Snapshot(long windowMs, long items, long batches, long busyNanos, SortedMap<Integer, Runs> bySize) {
    public Snapshot {
      bySize = Collections.unmodifiableSortedMap(new TreeMap<>(bySize));
    }
  }

  private long openedAtMs; // guarded by this
  private final long[] bucketStart;
  private final SortedMap<Integer, Runs>[] buckets;

  /**
   * @param windowMs how far back a snapshot looks (at least one bucket, {@value #BUCKET_MS} ms)
   * @param openedAtMs when the slot started serving: a snapshot covers nothing before it
   */
  @SuppressWarnings("unchecked")
  public ServingWindow(long windowMs, long openedAtMs) {
    if (windowMs < BUCKET_MS) {
      throw new IllegalArgumentException("windowMs: must be >= " + BUCKET_MS + ", was " + windowMs);
    }
    this.openedAtMs = openedAtMs;
    int n = (int) ((windowMs + BUCKET_MS - 1) / BUCKET_MS);
    bucketStart = new long[n];
    Arrays.fill(bucketStart, Long.MIN_VALUE);
    buckets = new SortedMap[n];
    for (int i = 0; i < n; i++) {
      buckets[i] = new TreeMap<>();
    }
  }

  /** One run of {@code items} items that took {@code nanos} on the runner and ended at {@code endMs}. */
  public synchronized void record(long endMs, int items, long nanos) {
    if (items <= 0 || nanos < 0) {
      return;
    }
    long start = Math.floorDiv(endMs, BUCKET_MS) * BUCKET_MS;
    int i = (int) Math.floorMod(Math.floorDiv(endMs, BUCKET_MS), (long) buckets.length);
    if (bucketStart[i] != start) {
      if (bucketStart[i] > start) {
        return; // a run older than the window (the clock stepped back): not counted
      }
      bucketStart[i] = start;
      buckets[i].clear();
    }
    buckets[i].merge(items, new Runs(1, nanos), Runs::plus);
  }

  /**
   * Forgets every run so far and begins the window again at {@code nowMs}, as if the slot opened
   * then: for runs that are not serving (a synthetic warm-up through the slot before it takes
   * traffic), whose times would otherwise be read as the slot's serving rate. A snapshot covers
   * nothing before {@code nowMs}, so the planner never counts such runs.
   */
  public synchronized void reset(long nowMs) {
    openedAtMs = nowMs;
    Arrays.fill(bucketStart, Long.MIN_VALUE);
    for (SortedMap<Integer, Runs> bucket : buckets) {
      bucket.clear();
    }
  }

  /** The runs of the window ending at {@code nowMs}. */
  public synchronized Snapshot snapshot(long nowMs) {
    long current = Math.floorDiv(nowMs, BUCKET_MS) * BUCKET_MS;
    long oldest = current - (buckets.length - 1) * BUCKET_MS;
    SortedMap<Integer, Runs> bySize = new TreeMap<>();
    for (int i = 0; i < buckets.length; i++) {
      if (bucketStart[i] >= oldest && bucketStart[i] <= current) {
        buckets[i].forEach((items, runs) -> bySize.merge(items, runs, Runs::plus));
      }
    }
    long items = 0;
    long batches = 0;
    long busy = 0;
    for (var e : bySize.entrySet()) {
      items += e.getKey() * e.getValue().runs();
      batches += e.getValue().runs();
      busy += e.getValue().busyNanos();
    }
    long since = Math.max(oldest, openedAtMs);
    return new Snapshot(Math.max(0, nowMs - since), items, batches, busy, bySize);
  }
}

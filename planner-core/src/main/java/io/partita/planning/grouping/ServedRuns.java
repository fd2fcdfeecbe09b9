package io.partita.planning.grouping;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What one serving slot ran over a window, as its status reports it: the runs that answered with a
 * result, by how many items (batch rows) each carried, and the time the slot's runner spent in them.
 *
 * @param items items answered by the runs
 * @param busyMs time the runs took on the slot's runner, milliseconds
 * @param runsBySize runs by items per run
 */
public record ServedRuns(long items, double busyMs, SortedMap<Integer, Long> runsBySize) {
  public ServedRuns {
    if (items < 0) {
      throw new IllegalArgumentException("items: must be >= 0, was " + items);
    }
    if (!(busyMs >= 0) || Double.isInfinite(busyMs)) {
      throw new IllegalArgumentException("busyMs: must be a finite number >= 0, was " + busyMs);
    }
    runsBySize = Collections.unmodifiableSortedMap(new TreeMap<>(runsBySize));
    runsBySize.forEach((size, runs) -> {
      if (size <= 0 || runs < 0) {
        throw new IllegalArgumentException("runsBySize: sizes must be > 0 and runs >= 0, got " + size + " -> " + runs);
      }
    });
  }

  /** Runs in all. */
  public long runs() {
    long n = 0;
    for (long r : runsBySize.values()) {
      n += r;
    }
    return n;
  }

  /** The runs of several slots (or windows) together. */
  public ServedRuns plus(ServedRuns other) {
    SortedMap<Integer, Long> sum = new TreeMap<>(runsBySize);
    other.runsBySize.forEach((size, runs) -> sum.merge(size, runs, Long::sum));
    return new ServedRuns(items + other.items, busyMs + other.busyMs, sum);
  }

  /** Nothing ran. */
  public static ServedRuns none() {
    return new ServedRuns(0, 0, new TreeMap<>());
  }
}

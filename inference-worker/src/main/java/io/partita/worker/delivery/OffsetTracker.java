package io.partita.worker.delivery;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which offsets may be committed, per partition, when requests are answered out of order (batches
 * of different slots finish in any order). An offset is <em>open</em> from the moment its record
 * is read until its answer is acknowledged by the broker; the committable offset of a partition is
 * its lowest open offset, or one past the last offset read when none is open. Committing that
 * never skips an unanswered record, so a worker that dies leaves every unanswered record to the
 * next owner (at-least-once).
 *
 * <p>Pure bookkeeping: no Kafka, no threads (the caller serializes access). {@code P} identifies a
 * partition.
 */
public final class OffsetTracker<P> {
  private final Map<P, State> partitions = new HashMap<>();

  private static final class State {
    final TreeSet<Long> open = new TreeSet<>();
    long next = -1; // one past the highest offset read
    long committed = -1; // the last offset handed out as committed

    long committable() {
      return open.isEmpty() ? next : open.first();
    }
  }

  /** A record was read; it stays open until {@link #answered}. */
  public void received(P partition, long offset) {
    State s = partitions.get(partition);
    if (s == null) {
      s = new State();
      s.committed = offset; // the first record read sits at the group's position: nothing to commit yet
      partitions.put(partition, s);
    }
    s.open.add(offset);
    s.next = Math.max(s.next, offset + 1);
  }

  /** The answer to a record was acknowledged. Unknown partitions (forgotten after a revocation) are ignored. */
  public void answered(P partition, long offset) {
    State s = partitions.get(partition);
    if (s != null) {
      s.open.remove(offset);
    }
  }

  /** Records read and not yet answered, over all partitions. */
  public int open() {
    int n = 0;
    for (State s : partitions.values()) {
      n += s.open.size();
    }
    return n;
  }

  /** Records read and not yet answered in these partitions. */
  public int open(Collection<P> of) {
    int n = 0;
    for (P p : of) {
      State s = partitions.get(p);
      n += s == null ? 0 : s.open.size();
    }
    return n;
  }

  /**
   * The offset to commit (the next one to read) for every partition whose committable offset moved
   * since it was last handed out; each is then considered committed.
   */
  public Map<P, Long> takeCommittable() {
    return takeCommittable(partitions.keySet());
  }

  /** As {@link #takeCommittable()}, for these partitions only. */
  public Map<P, Long> takeCommittable(Collection<P> of) {
    Map<P, Long> out = new LinkedHashMap<>();
    for (P p : of) {
      State s = partitions.get(p);
      if (s == null) {
        continue;
      }
      long offset = s.committable();
      if (offset > s.committed) {
        s.committed = offset;
        out.put(p, offset);
      }
    }
    return out;
  }

  /**
   * The committable offset of each of these partitions that has read anything, whether or not it
   * moved (for the synchronous commit before giving partitions up).
   */
  public Map<P, Long> committable(Collection<P> of) {
    Map<P, Long> out = new LinkedHashMap<>();
    for (P p : of) {
      State s = partitions.get(p);
      if (s != null && s.next >= 0) {
        s.committed = Math.max(s.committed, s.committable());
        out.put(p, s.committable());
      }
    }
    return out;
  }

  /** Drops the partitions (revoked or lost): their answers no longer count here. */
  public void forget(Collection<P> of) {
    for (P p : of) {
      partitions.remove(p);
    }
  }
}

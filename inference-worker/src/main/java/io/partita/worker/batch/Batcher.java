package io.partita.worker.batch;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.TreeMap;

/**
 * Decides which queued requests run together: pure, with the time passed in, no threads and no
 * Kafka. One instance per slot; the caller serializes access.
 *
 * <p>Rules, applied by {@link #next}:
 * <ul>
 *   <li>A request past its deadline is taken out and returned as expired, never batched.
 *   <li>A batch holds requests of one {@link BatchKey} only, in arrival order, and at most {@link
 *       BatchPolicy#maxRows()} rows; a request bigger than that runs alone.
 *   <li>A key's batch is due when it is full (it reached the row limit, or the next request of the
 *       key would not fit), when its oldest request has waited {@link BatchPolicy#maxDelayMs()}, or
 *       when the caller flushes (on shutdown).
 *   <li>Among due batches, the one whose oldest request is oldest runs first, so no key starves.
 *   <li>When nothing is due, the decision says when to look again: the earliest moment a batch
 *       becomes due or a request expires.
 * </ul>
 */
public final class Batcher<T> {
  private BatchPolicy policy;
  /** Every key with queued requests. */
  private final Map<BatchKey, KeyQueue<T>> byKey = new HashMap<>();
  /** The same keys, by the arrival number of their oldest queued request. */
  private final TreeMap<Long, KeyQueue<T>> byOldest = new TreeMap<>();
  /** Queued requests that have a deadline, soonest first; expired or taken ones are dropped lazily. */
  private final PriorityQueue<Entry<T>> deadlines = new PriorityQueue<>(Batcher::soonerDeadline);
  private long nextSeq;
  private int size;
  private int queuedRows;

  /** A queued request and its arrival number; {@code gone} once it expired or was taken into a batch. */
  private static final class Entry<T> {
    final Pending<T> pending;
    final long seq;
    boolean gone;

    Entry(Pending<T> pending, long seq) {
      this.pending = pending;
      this.seq = seq;
    }
  }

  /** One key's requests in arrival order (some may be gone), and the rows of those still queued. */
  private static final class KeyQueue<T> {
    final BatchKey key;
    final ArrayDeque<Entry<T>> entries = new ArrayDeque<>();
    int rows;

    KeyQueue(BatchKey key) {
      this.key = key;
    }
  }

  public Batcher(BatchPolicy policy) {
    this.policy = policy;
  }

  /** Changes the policy for the batches formed from now on (the largest batch after a re-plan); not thread-safe, as the rest. */
  public void policy(BatchPolicy policy) {
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  public BatchPolicy policy() {
    return policy;
  }

  /** What to do now: answer the expired requests, run the batch (if any), then wait until {@code wakeAtMs}. */
  public record Decision<T>(List<Pending<T>> expired, List<Pending<T>> batch, long wakeAtMs) {
    public boolean idle() {
      return expired.isEmpty() && batch.isEmpty();
    }
  }

  /**
   * Queues a request.
   *
   * @return when {@link #next} must be asked again because of this request: {@link Long#MIN_VALUE}
   *     (at once) when its key's batch is now full, otherwise the sooner of the moment its key's batch
   *     becomes due and its deadline. A caller whose runner already waits until no later than that
   *     need not wake it; other keys' moments did not change.
   */
  public long add(Pending<T> pending) {
    Entry<T> entry = new Entry<>(pending, nextSeq++);
    KeyQueue<T> queue = byKey.computeIfAbsent(pending.key(), KeyQueue::new);
    if (queue.entries.isEmpty()) { // a new key (an emptied one is removed): it joins the order
      byOldest.put(entry.seq, queue);
    }
    queue.entries.addLast(entry);
    queue.rows += pending.rows();
    if (pending.deadlineMs() != Pending.NO_DEADLINE) {
      deadlines.add(entry);
    }
    size++;
    queuedRows += pending.rows();
    if (full(queue)) {
      return Long.MIN_VALUE;
    }
    return pending.deadlineMs() == Pending.NO_DEADLINE ? dueAt(queue) : Math.min(dueAt(queue), pending.deadlineMs() + 1);
  }

  /** Whether the key's batch is at the row limit (or its next request would not fit). */
  private boolean full(KeyQueue<T> queue) {
    return queue.rows >= policy.maxRows();
  }

  /** When the key's batch is due by age: its oldest request's queueing plus the delay. */
  private long dueAt(KeyQueue<T> queue) {
    return queue.entries.peekFirst().pending.enqueuedAtMs() + policy.maxDelayMs();
  }

  public int size() {
    return size;
  }

  public int rows() {
    return queuedRows;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  /**
   * Takes out the expired requests and the next due batch.
   *
   * @param nowMs the current time
   * @param flush run the oldest batch even if it is neither full nor old enough (draining)
   */
  public Decision<T> next(long nowMs, boolean flush) {
    List<Pending<T>> expired = takeExpired(nowMs);
    if (size == 0) {
      return new Decision<>(expired, List.of(), Long.MAX_VALUE);
    }
    long wakeAt = Long.MAX_VALUE;
    for (KeyQueue<T> queue : byOldest.values()) { // keys in the order of their oldest request
      long dueAt = dueAt(queue);
      if (flush || full(queue) || nowMs >= dueAt) {
        return new Decision<>(expired, take(queue), nowMs);
      }
      wakeAt = Math.min(wakeAt, dueAt);
    }
    Entry<T> soonest = liveDeadline();
    if (soonest != null) {
      wakeAt = Math.min(wakeAt, soonest.pending.deadlineMs() + 1);
    }
    return new Decision<>(expired, List.of(), wakeAt);
  }

  /** Everything still queued, in arrival order, leaving the batcher empty. */
  public List<Pending<T>> drainAll() {
    List<Entry<T>> live = new ArrayList<>(size);
    for (KeyQueue<T> queue : byKey.values()) {
      for (Entry<T> e : queue.entries) {
        if (!e.gone) {
          live.add(e);
        }
      }
    }
    live.sort(Comparator.comparingLong(e -> e.seq));
    byKey.clear();
    byOldest.clear();
    deadlines.clear();
    size = 0;
    queuedRows = 0;
    return live.stream().map(e -> e.pending).toList();
  }

  /** Soonest deadline first, then arrival order; spelled out rather than chained: the heap compares on every add and take. */
  private static int soonerDeadline(Entry<?> a, Entry<?> b) {
    int byDeadline = Long.compare(a.pending.deadlineMs(), b.pending.deadlineMs());
    return byDeadline != 0 ? byDeadline : Long.compare(a.seq, b.seq);
  }

  /** Takes out, in arrival order, every request whose deadline has passed. */
  private List<Pending<T>> takeExpired(long nowMs) {
    Entry<T> first = liveDeadline();
    if (first == null || !first.pending.expiredAt(nowMs)) {
      return List.of(); // the common case, without allocating
    }
    List<Entry<T>> expired = new ArrayList<>();
    for (Entry<T> e = liveDeadline(); e != null && e.pending.expiredAt(nowMs); e = liveDeadline()) {
      deadlines.poll();
      KeyQueue<T> queue = byKey.get(e.pending.key());
      boolean wasOldest = queue.entries.peekFirst() == e;
      e.gone = true;
      forget(queue, e.pending.rows());
      if (wasOldest) {
        byOldest.remove(e.seq);
        dropGoneHead(queue);
      }
      expired.add(e);
    }
    if (expired.size() > 1) {
      expired.sort(Comparator.comparingLong(e -> e.seq));
    }
    return expired.stream().map(e -> e.pending).toList();
  }

  /** The queued request with the soonest deadline, dropping those already taken or expired; null when none. */
  private Entry<T> liveDeadline() {
    Entry<T> e = deadlines.peek();
    while (e != null && e.gone) {
      deadlines.poll();
      e = deadlines.peek();
    }
    return e;
  }

  /** The longest arrival-order prefix of the key's requests that fits the row limit (at least one), taken out. */
  private List<Pending<T>> take(KeyQueue<T> queue) {
    byOldest.remove(queue.entries.peekFirst().seq);
    List<Pending<T>> batch = new ArrayList<>();
    int rows = 0;
    while (!queue.entries.isEmpty()) {
      Entry<T> e = queue.entries.peekFirst();
      if (e.gone) {
        queue.entries.pollFirst();
        continue;
      }
      if (!batch.isEmpty() && rows + e.pending.rows() > policy.maxRows()) {
        break;
      }
      queue.entries.pollFirst();
      e.gone = true; // so the deadline heap drops it
      batch.add(e.pending);
      rows += e.pending.rows();
      forget(queue, e.pending.rows());
    }
    dropGoneHead(queue);
    return batch;
  }

  private void forget(KeyQueue<T> queue, int rows) {
    queue.rows -= rows;
    size--;
    queuedRows -= rows;
  }

  /**
   * After the key's oldest request left: drops the gone requests now at its head and puts the key
   * back in the order under its new oldest request, or forgets the key when none is left.
   */
  private void dropGoneHead(KeyQueue<T> queue) {
    while (!queue.entries.isEmpty() && queue.entries.peekFirst().gone) {
      queue.entries.pollFirst();
    }
    if (queue.entries.isEmpty()) {
      byKey.remove(queue.key);
    } else {
      byOldest.put(queue.entries.peekFirst().seq, queue);
    }
  }
}

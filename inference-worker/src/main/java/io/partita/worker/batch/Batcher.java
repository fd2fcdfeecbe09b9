package io.partita.worker.batch;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
  private final LinkedList<Pending<T>> queue = new LinkedList<>();
  private int queuedRows;

  public Batcher(BatchPolicy policy) {
    this.policy = policy;
  }

  /** Changes the policy for the batches formed from now on (the largest batch after a re-plan); not thread-safe, as the rest. */
  public void policy(BatchPolicy policy) {
    this.policy = java.util.Objects.requireNonNull(policy, "policy");
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

  public void add(Pending<T> pending) {
    queue.addLast(pending);
    queuedRows += pending.rows();
  }

  public int size() {
    return queue.size();
  }

  public int rows() {
    return queuedRows;
  }

  public boolean isEmpty() {
    return queue.isEmpty();
  }

  /**
   * Takes out the expired requests and the next due batch.
   *
   * @param nowMs the current time
   * @param flush run the oldest batch even if it is neither full nor old enough (draining)
   */
  public Decision<T> next(long nowMs, boolean flush) {
    List<Pending<T>> expired = new ArrayList<>();
    for (Iterator<Pending<T>> it = queue.iterator(); it.hasNext(); ) {
      Pending<T> p = it.next();
      if (p.expiredAt(nowMs)) {
        it.remove();
        queuedRows -= p.rows();
        expired.add(p);
      }
    }
    if (queue.isEmpty()) {
      return new Decision<>(expired, List.of(), Long.MAX_VALUE);
    }
    // Keys in the order of their oldest request (the queue is in arrival order).
    Map<BatchKey, List<Pending<T>>> groups = new LinkedHashMap<>();
    for (Pending<T> p : queue) {
      groups.computeIfAbsent(p.key(), k -> new ArrayList<>()).add(p);
    }
    long wakeAt = Long.MAX_VALUE;
    for (List<Pending<T>> group : groups.values()) {
      List<Pending<T>> batch = fill(group);
      int rows = batch.stream().mapToInt(Pending::rows).sum();
      boolean full = rows >= policy.maxRows() || batch.size() < group.size();
      long dueAt = group.get(0).enqueuedAtMs() + policy.maxDelayMs();
      if (flush || full || nowMs >= dueAt) {
        take(batch);
        return new Decision<>(expired, batch, nowMs);
      }
      wakeAt = Math.min(wakeAt, dueAt);
    }
    for (Pending<T> p : queue) {
      if (p.deadlineMs() != Pending.NO_DEADLINE) {
        wakeAt = Math.min(wakeAt, p.deadlineMs() + 1);
      }
    }
    return new Decision<>(expired, List.of(), wakeAt);
  }

  /** Everything still queued, in arrival order, leaving the batcher empty. */
  public List<Pending<T>> drainAll() {
    List<Pending<T>> all = new ArrayList<>(queue);
    queue.clear();
    queuedRows = 0;
    return all;
  }

  /** The longest arrival-order prefix of a key's requests that fits the row limit (at least one). */
  private List<Pending<T>> fill(List<Pending<T>> group) {
    List<Pending<T>> batch = new ArrayList<>();
    int rows = 0;
    for (Pending<T> p : group) {
      if (!batch.isEmpty() && rows + p.rows() > policy.maxRows()) {
        break;
      }
      batch.add(p);
      rows += p.rows();
    }
    return batch;
  }

  private void take(List<Pending<T>> batch) {
    // By identity: two requests with equal contents are still two requests.
    Set<Pending<T>> taken = Collections.newSetFromMap(new IdentityHashMap<>());
    taken.addAll(batch);
    queue.removeIf(taken::contains);
    for (Pending<T> p : batch) {
      queuedRows -= p.rows();
    }
  }
}

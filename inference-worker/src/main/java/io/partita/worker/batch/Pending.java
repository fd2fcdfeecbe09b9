package io.partita.worker.batch;

import java.util.Objects;

/**
 * One queued request as the batcher sees it.
 *
 * @param item what the caller gets back in a batch (the request and how to answer it)
 * @param key what it must share with the others in its batch
 * @param rows its leading dimension (1 for a request that cannot be batched with others)
 * @param enqueuedAtMs when it was queued
 * @param deadlineMs epoch ms after which it is answered DEADLINE_EXCEEDED without running;
 *     {@link Long#MAX_VALUE} for none
 */
public record Pending<T>(T item, BatchKey key, int rows, long enqueuedAtMs, long deadlineMs) {
  public static final long NO_DEADLINE = Long.MAX_VALUE;

  public Pending {
    Objects.requireNonNull(item, "item");
    Objects.requireNonNull(key, "key");
    if (rows < 1) {
      throw new IllegalArgumentException("rows must be at least 1, got " + rows);
    }
  }

  public boolean expiredAt(long nowMs) {
    return nowMs > deadlineMs;
  }
}

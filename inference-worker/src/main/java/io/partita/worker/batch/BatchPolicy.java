package io.partita.worker.batch;

/**
 * How a slot forms batches.
 *
 * @param maxRows the most rows (sum of the requests' leading dimensions) one batch may hold; a
 *     single request with more rows still runs, alone (a slot cuts batchable requests into parts of
 *     at most this many rows before they reach the batcher)
 * @param maxDelayMs how long the oldest request of a batch may wait for others to join it; 0 runs
 *     whatever is queued as soon as the slot is free
 */
public record BatchPolicy(int maxRows, long maxDelayMs) {
  public BatchPolicy {
    if (maxRows < 1) {
      throw new IllegalArgumentException("maxRows must be at least 1, got " + maxRows);
    }
    if (maxDelayMs < 0) {
      throw new IllegalArgumentException("maxDelayMs must not be negative, got " + maxDelayMs);
    }
  }
}

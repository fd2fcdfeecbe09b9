package io.partita.gateway.limits;

/**
 * How many requests may wait for a reply at once: {@code limit} in all, of which batch job items
 * hold at most {@code jobLimit}. Online calls never wait for capacity (they are refused, 429); job
 * items wait for it. Because job items take a slot only while the total is under the limit and never
 * more than their share, online traffic always has at least {@code limit - jobLimit} slots: jobs
 * yield to it.
 */
public final class Capacity {
  private final int limit;
  private final int jobLimit;
  private int online;
  private int jobs;

  public Capacity(int limit, double jobShare) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1");
    }
    this.limit = limit;
    this.jobLimit = Math.max(1, Math.min(limit, (int) Math.floor(limit * jobShare)));
  }

  public int limit() {
    return limit;
  }

  public int jobLimit() {
    return jobLimit;
  }

  /** Takes a slot for an online call, or returns false when the gateway is full. */
  public synchronized boolean tryOnline() {
    if (online + jobs >= limit) {
      return false;
    }
    online++;
    return true;
  }

  public synchronized void releaseOnline() {
    online--;
    notifyAll();
  }

  /** Takes a slot for a job item, or returns false when jobs hold their share or the gateway is full. */
  public synchronized boolean tryJob() {
    if (jobs >= jobLimit || online + jobs >= limit) {
      return false;
    }
    jobs++;
    return true;
  }

  /** Waits up to {@code maxWaitMs} for a job slot; false when none came (the caller checks why and asks again). */
  public synchronized boolean awaitJob(long maxWaitMs) throws InterruptedException {
    long end = System.nanoTime() + maxWaitMs * 1_000_000;
    while (!tryJob()) {
      long left = (end - System.nanoTime()) / 1_000_000;
      if (left <= 0) {
        return false;
      }
      wait(left);
    }
    return true;
  }

  public synchronized void releaseJob() {
    jobs--;
    notifyAll();
  }

  public synchronized int online() {
    return online;
  }

  public synchronized int jobs() {
    return jobs;
  }
}

package io.partita.launcher.bench;

import io.partita.profiler.stats.LatencySummary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * A closed-loop load generator: {@code concurrency} threads each make one blocking call after
 * another for a warm-up and then a measured period; latencies of the measured calls give the
 * percentiles, their count over the period the throughput.
 */
final class LoadRunner {
  /** One blocking call; throws on failure (counted as an error). */
  interface Call {
    void run() throws Exception;
  }

  record Result(int concurrency, long calls, long errors, double seconds, LatencySummary latency, int itemsPerCall) {
    /** Items (batch rows) per second. */
    double throughput() {
      return calls * (double) itemsPerCall / seconds;
    }
  }

  private LoadRunner() {}

  /**
   * @param callFor makes the call of thread i (each thread gets its own, so inputs are not shared)
   */
  static Result run(int concurrency, Duration warmup, Duration measured, int itemsPerCall, IntFunction<Call> callFor)
      throws InterruptedException {
    List<long[]> perThread = new ArrayList<>();
    AtomicLong errors = new AtomicLong();
    CountDownLatch done = new CountDownLatch(concurrency);
    long start = System.nanoTime();
    long measureFrom = start + warmup.toNanos();
    long end = measureFrom + measured.toNanos();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < concurrency; i++) {
      long[][] holder = new long[1][];
      Call call = callFor.apply(i);
      Thread t = new Thread(() -> {
        long[] samples = new long[1024];
        int n = 0;
        try {
          while (true) {
            long before = System.nanoTime();
            if (before >= end) {
              break;
            }
            try {
              call.run();
            } catch (Exception e) {
              if (before >= measureFrom) {
                errors.incrementAndGet();
              }
              continue;
            }
            long after = System.nanoTime();
            if (before >= measureFrom && after <= end) {
              if (n == samples.length) {
                samples = java.util.Arrays.copyOf(samples, n * 2);
              }
              samples[n++] = after - before;
            }
          }
        } finally {
          holder[0] = java.util.Arrays.copyOf(samples, n);
          synchronized (perThread) {
            perThread.add(holder[0]);
          }
          done.countDown();
        }
      }, "bench-load-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
    done.await();
    long total = perThread.stream().mapToLong(a -> a.length).sum();
    long[] all = new long[(int) total];
    int at = 0;
    for (long[] a : perThread) {
      System.arraycopy(a, 0, all, at, a.length);
      at += a.length;
    }
    LatencySummary summary = all.length == 0 ? null : LatencySummary.of(all);
    return new Result(concurrency, all.length, errors.get(), measured.toNanos() / 1e9, summary, itemsPerCall);
  }
}

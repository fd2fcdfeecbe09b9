package io.partita.bench;

import io.partita.profiler.stats.LatencySummary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * A load generator, closed loop ({@link #run}) or with a fixed number of calls in flight ({@link #inFlight}).
 * Closed loop: {@code concurrency} threads each make one blocking call after
 * another for a warm-up and then a measured period. The measured calls are those that complete
 * within the period, whenever they started: their count over the period is the throughput, their
 * latencies (start to answer) give the percentiles. Counting only calls that also started within
 * it would lose the calls that span its edges, all of them when a call takes longer than the
 * period (PaddleOCR at 1,024 in flight read 0 items/s that way).
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

  /** Told when the measured window starts and ends (on the coordinating thread), e.g. to sample CPU time. */
  interface Window {
    Window NONE = new Window() {
      @Override
      public void start() {}

      @Override
      public void end() {}
    };

    void start();

    void end();
  }

  /** One asynchronous call: the future completes when it is answered, exceptionally on failure. */
  interface AsyncCall {
    CompletableFuture<?> start();
  }

  private LoadRunner() {}

  static Result run(int concurrency, Duration warmup, Duration measured, int itemsPerCall, IntFunction<Call> callFor)
      throws InterruptedException {
    return run(concurrency, warmup, measured, itemsPerCall, callFor, Window.NONE);
  }

  /**
   * Keeps {@code inFlight} asynchronous calls outstanding from one caller (no thread per call): each
   * answer starts the next call at once, so the load does not wait on a thread's turn. Latency is
   * per call, start to answer.
   */
  static Result inFlight(int inFlight, Duration warmup, Duration measured, AsyncCall call, Window window)
      throws InterruptedException {
    AtomicLong errors = new AtomicLong();
    CountDownLatch done = new CountDownLatch(inFlight);
    long start = System.nanoTime();
    long measureFrom = start + warmup.toNanos();
    long end = measureFrom + measured.toNanos();
    long[][] samples = {new long[1 << 16]};
    int[] n = {0};
    class Lane {
      void next() {
        long before = System.nanoTime();
        if (before >= end) {
          done.countDown();
          return;
        }
        CompletableFuture<?> f;
        try {
          f = call.start();
        } catch (RuntimeException e) {
          f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((r, e) -> {
          long after = System.nanoTime();
          boolean inWindow = after >= measureFrom && after <= end;
          if (e != null) {
            if (inWindow) {
              errors.incrementAndGet();
            }
          } else if (inWindow) {
            synchronized (samples) {
              if (n[0] == samples[0].length) {
                samples[0] = Arrays.copyOf(samples[0], n[0] * 2);
              }
              samples[0][n[0]++] = after - before;
            }
          }
          next();
        });
      }
    }
    for (int i = 0; i < inFlight; i++) {
      new Lane().next();
    }
    sleepUntil(measureFrom);
    window.start();
    sleepUntil(end);
    window.end();
    done.await();
    long[] all;
    synchronized (samples) {
      all = Arrays.copyOf(samples[0], n[0]);
    }
    LatencySummary summary = all.length == 0 ? null : LatencySummary.of(all);
    return new Result(inFlight, all.length, errors.get(), measured.toNanos() / 1e9, summary, 1);
  }

  /**
   * Waits for a point of the run's wall-clock schedule (the warm-up's end, the window's end): a fixed
   * wait is right here, since the window is a span of time by definition, not a condition to await.
   */
  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  /**
   * @param callFor makes the call of thread i (each thread gets its own, so inputs are not shared)
   */
  static Result run(int concurrency, Duration warmup, Duration measured, int itemsPerCall, IntFunction<Call> callFor, Window window)
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
              long failedAt = System.nanoTime();
              if (failedAt >= measureFrom && failedAt <= end) {
                errors.incrementAndGet();
              }
              continue;
            }
            long after = System.nanoTime();
            if (after >= measureFrom && after <= end) {
              if (n == samples.length) {
                samples = Arrays.copyOf(samples, n * 2);
              }
              samples[n++] = after - before;
            }
          }
        } finally {
          holder[0] = Arrays.copyOf(samples, n);
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
    sleepUntil(measureFrom);
    window.start();
    sleepUntil(end);
    window.end();
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

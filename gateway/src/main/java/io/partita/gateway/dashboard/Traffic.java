package io.partita.gateway.dashboard;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The gateway's own infer traffic per service model, sampled from its metrics registry (the
 * {@code partita.gateway.requests} timer, endpoint {@code infer}) once a second, so the dashboard
 * shows rates and percentiles over a recent window without keeping anything per request.
 *
 * <p>Percentiles come from the timer's histogram buckets (counts in the window, by differencing two
 * samples): a p99 is the upper bound of the bucket the 99th request fell in, so it is coarse (the
 * buckets grow about 1.4x each) but never below the true value.
 */
final class Traffic {
  static final String TIMER = "partita.gateway.requests";

  /** One model's cumulative counts at one moment. */
  record Sample(long atMs, long requests, long errors, double[] bucketMs, long[] cumulative) {}

  /**
   * What one service model's traffic looks like now: {@code requests} and {@code errors} since the
   * gateway started, {@code windowRequests} and {@code windowErrors} in the window, the rates and
   * percentiles over the window.
   */
  record Figures(long requests, long errors, long windowRequests, long windowErrors, double rate, double errorRate,
      Double p50Ms, Double p99Ms, List<double[]> history) {}

  private final MeterRegistry registry;
  private final int windowSamples;
  private final int historySamples;
  private final Map<String, ArrayDeque<Sample>> samples = new TreeMap<>();

  /**
   * @param windowSeconds how far back rates and percentiles look
   * @param historySeconds how much history the sparkline keeps
   */
  Traffic(MeterRegistry registry, int windowSeconds, int historySeconds) {
    this.registry = registry;
    this.windowSamples = windowSeconds;
    this.historySamples = Math.max(historySeconds, windowSeconds) + 1;
  }

  /** Takes one sample of every model in {@code models}; called once a second. */
  synchronized void sample(Set<String> models, long nowMs) {
    for (String model : models) {
      long requests = 0;
      long errors = 0;
      double[] bounds = null;
      long[] cumulative = null;
      for (Timer t : registry.find(TIMER).tags("model", model, "endpoint", "infer").timers()) {
        HistogramSnapshot snap = t.takeSnapshot();
        requests += snap.count();
        if (!"ok".equals(t.getId().getTag("outcome"))) {
          errors += snap.count();
        }
        CountAtBucket[] buckets = snap.histogramCounts();
        if (bounds == null) {
          bounds = new double[buckets.length];
          cumulative = new long[buckets.length];
          for (int i = 0; i < buckets.length; i++) {
            bounds[i] = buckets[i].bucket(TimeUnit.MILLISECONDS);
          }
        }
        if (buckets.length == cumulative.length) {
          for (int i = 0; i < buckets.length; i++) {
            cumulative[i] += (long) buckets[i].count();
          }
        }
      }
      ArrayDeque<Sample> q = samples.computeIfAbsent(model, m -> new ArrayDeque<>());
      q.addLast(new Sample(nowMs, requests, errors, bounds == null ? new double[0] : bounds,
          cumulative == null ? new long[0] : cumulative));
      while (q.size() > historySamples) {
        q.removeFirst();
      }
    }
  }

  /** The figures of one model; null before its first sample. */
  synchronized Figures figures(String model) {
    ArrayDeque<Sample> q = samples.get(model);
    if (q == null || q.isEmpty()) {
      return null;
    }
    List<Sample> all = new ArrayList<>(q);
    Sample now = all.get(all.size() - 1);
    Sample then = all.get(Math.max(0, all.size() - 1 - windowSamples));
    double seconds = Math.max(1e-3, (now.atMs() - then.atMs()) / 1000.0);
    long n = now.requests() - then.requests(); // 0 with one sample: then is now
    long e = now.errors() - then.errors();
    double rate = all.size() == 1 ? 0 : n / seconds;
    double errorRate = all.size() == 1 ? 0 : e / seconds;
    Double p50 = quantile(then, now, 0.50);
    Double p99 = quantile(then, now, 0.99);
    List<double[]> history = new ArrayList<>();
    for (int i = 1; i < all.size(); i++) {
      Sample a = all.get(i - 1);
      Sample b = all.get(i);
      double s = Math.max(1e-3, (b.atMs() - a.atMs()) / 1000.0);
      history.add(new double[] {b.atMs() / 1000.0, (b.requests() - a.requests()) / s, (b.errors() - a.errors()) / s});
    }
    return new Figures(now.requests(), now.errors(), n, e, rate, errorRate, p50, p99, history);
  }

  /** The upper bound (ms) of the bucket holding quantile {@code q} of the calls between two samples; null without calls. */
  static Double quantile(Sample then, Sample now, double q) {
    long[] a = now.cumulative();
    long[] b = then.cumulative().length == a.length ? then.cumulative() : new long[a.length];
    long total = now.requests() - then.requests();
    if (total <= 0 || a.length == 0) {
      return null;
    }
    double rank = Math.ceil(q * total);
    for (int i = 0; i < a.length; i++) {
      if (a[i] - b[i] >= rank) {
        return now.bucketMs()[i];
      }
    }
    return null; // above the largest bucket (over gateway.timeout)
  }
}

package io.partita.bench;

import io.partita.bench.OpenLoad.Call;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

/** What an {@link OpenLoad} run recorded, with the figures the reports give. Times are seconds from the run's start. */
public final class Calls {
  private final List<Call> calls;
  private final long startNanos;

  Calls(List<Call> calls, long startNanos) {
    this.calls = List.copyOf(calls);
    this.startNanos = startNanos;
  }

  public List<Call> all() {
    return calls;
  }

  public long sent() {
    return calls.size();
  }

  public long ok() {
    return calls.stream().filter(c -> c.answered() && c.outcome().ok()).count();
  }

  /** Calls never answered, not even with an error. */
  public long lost() {
    return calls.stream().filter(c -> !c.answered()).count();
  }

  /** Answers other than OK, by code. */
  public SortedMap<String, Long> errors() {
    SortedMap<String, Long> out = new TreeMap<>();
    calls.stream().filter(c -> c.answered() && !c.outcome().ok()).forEach(c -> out.merge(c.outcome().code(), 1L, Long::sum));
    return out;
  }

  /** The detail of the first answer with {@code code}, or null: what an error said. */
  public String firstDetail(String code) {
    return calls.stream().filter(c -> c.answered() && c.outcome().code().equals(code)).map(c -> c.outcome().detail())
        .findFirst().orElse(null);
  }

  /** OK answers by the caller that made them and the host that says it answered. */
  public SortedMap<String, SortedMap<String, Long>> okByCallerAndHost() {
    SortedMap<String, SortedMap<String, Long>> out = new TreeMap<>();
    calls.stream().filter(c -> c.answered() && c.outcome().ok()).forEach(c -> out.computeIfAbsent(c.caller(), k -> new TreeMap<>())
        .merge(c.outcome().host() == null ? "?" : c.outcome().host(), 1L, Long::sum));
    return out;
  }

  /** OK answers by the host that says it answered ("?" when the answer did not say). */
  public SortedMap<String, Long> okByHost() {
    SortedMap<String, Long> out = new TreeMap<>();
    calls.stream().filter(c -> c.answered() && c.outcome().ok())
        .forEach(c -> out.merge(c.outcome().host() == null ? "?" : c.outcome().host(), 1L, Long::sum));
    return out;
  }

  /** A host's share of the OK answers that name a host. */
  public double share(String host) {
    SortedMap<String, Long> by = okByHost();
    long named = by.entrySet().stream().filter(e -> !e.getKey().equals("?")).mapToLong(SortedMap.Entry::getValue).sum();
    return named == 0 ? 0 : by.getOrDefault(host, 0L) / (double) named;
  }

  /** Latency percentile (0-100) in ms of the answered calls sent in [{@code fromS}, {@code toS}); NaN without any. */
  public double latencyMs(double percentile, double fromS, double toS) {
    return percentile(latencies(c -> c.answered() && sentIn(c, fromS, toS)), percentile);
  }

  /** As {@link #latencyMs(double, double, double)}, OK answers only. */
  public double okLatencyMs(double percentile, double fromS, double toS) {
    return percentile(latencies(c -> c.answered() && c.outcome().ok() && sentIn(c, fromS, toS)), percentile);
  }

  private double[] latencies(Predicate<Call> which) {
    return calls.stream().filter(which).mapToDouble(Call::latencyMs).sorted().toArray();
  }

  private boolean sentIn(Call c, double fromS, double toS) {
    double t = (c.sentNanos() - startNanos) / 1e9;
    return t >= fromS && t < toS;
  }

  static double percentile(double[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank))];
  }

  /** OK answers per second of the run, by when they were answered. */
  public long[] okPerSecond() {
    long last = calls.stream().filter(Call::answered).mapToLong(Call::answeredNanos).max().orElse(startNanos);
    long[] out = new long[(int) ((last - startNanos) / 1_000_000_000L) + 1];
    calls.stream().filter(c -> c.answered() && c.outcome().ok())
        .forEach(c -> out[(int) ((c.answeredNanos() - startNanos) / 1_000_000_000L)]++);
    return out;
  }

  /** Mean OK answers per second over [{@code fromS}, {@code toS}). */
  public double okRate(int fromS, int toS) {
    long[] per = okPerSecond();
    long sum = 0;
    for (int s = Math.max(0, fromS); s < Math.min(per.length, toS); s++) {
      sum += per[s];
    }
    return toS > fromS ? sum / (double) (toS - fromS) : Double.NaN;
  }

  /**
   * Seconds from {@code faultS} until the OK answers per second, averaged over {@code window}
   * seconds, are back within {@code tolerance} (relative) of {@code baseline}; -1 when they never
   * are in the run.
   */
  public int recoverySeconds(int faultS, double baseline, double tolerance, int window) {
    long[] per = okPerSecond();
    for (int s = faultS; s + window <= per.length; s++) {
      double mean = Arrays.stream(per, s, s + window).average().orElse(0);
      if (mean >= (1 - tolerance) * baseline) {
        return s - faultS;
      }
    }
    return -1;
  }

  /** The calls sent in [{@code fromS}, {@code toS}), as a recording of their own. */
  public Calls sentBetween(double fromS, double toS) {
    List<Call> in = new ArrayList<>();
    calls.stream().filter(c -> sentIn(c, fromS, toS)).forEach(in::add);
    return new Calls(in, startNanos);
  }
}

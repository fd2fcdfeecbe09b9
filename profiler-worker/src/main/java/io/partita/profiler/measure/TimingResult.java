package io.partita.profiler.measure;

import io.partita.profiler.stats.LatencySummary;

/**
 * One measured point: a model version on a partition of {@code size} resources of a pool, at one
 * batch size, with one execution provider. A configuration that failed is a result with
 * {@code ok = false}, the error, and no numbers (NaN latencies, zero throughput and samples); it is
 * never filled in with invented figures.
 *
 * <p>The fields come in named groups: what was measured where ({@link Point}), how long it took
 * ({@link Latency}), what it gave and cost, and how the measurement went ({@link Outcome}). The flat
 * accessors ({@link #model()}, {@link #p50Ms()}, ...) read through the groups, for the JSON lines and
 * the Avro mapping, which list the fields flat.
 *
 * @param point what was measured, where and how
 * @param latency the timed runs' latencies
 * @param throughput items per second (batch size times runs per second); for a partition of several
 *     GPUs, the sum over its devices
 * @param memoryBytes resident memory one instance added (session, arena after warm-up, inputs); -1
 *     when it could not be read
 * @param outcome whether it worked, was stable and pinned
 */
public record TimingResult(Point point, Latency latency, double throughput, long memoryBytes, Outcome outcome) {

  /**
   * What a point is: the model version, where it ran and how.
   *
   * @param pool "cpu" or "gpu"
   * @param size partition size: CPU cores, or GPUs
   * @param provider execution provider, e.g. "CPU", "CUDA"
   */
  public record Point(String model, String version, String host, String pool, int size, int batch, String provider) {}

  /**
   * Latencies of the timed runs, in milliseconds (NaN when nothing was measured).
   *
   * @param samples timed runs
   */
  public record Latency(double p50Ms, double p90Ms, double p99Ms, double meanMs, int samples) {
    static final Latency NONE = new Latency(Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0);

    static Latency of(LatencySummary summary) {
      return new Latency(summary.p50Millis(), summary.p90Millis(), summary.p99Millis(), summary.meanMillis(),
          summary.samples());
    }
  }

  /**
   * How the measurement went.
   *
   * @param stable whether the median met the stability rule before the time budget ran out
   * @param pinned whether every thread was pinned to its own core as asked
   * @param ok whether the configuration ran at all; {@code error} says why not
   */
  public record Outcome(boolean stable, boolean pinned, boolean ok, String error) {
    static Outcome measured(boolean stable, boolean pinned) {
      return new Outcome(stable, pinned, true, null);
    }

    static Outcome failed(String error) {
      return new Outcome(false, false, false, error);
    }
  }

  static TimingResult measured(Point key, LatencySummary summary, double throughput, long memoryBytes,
                               boolean stable, boolean pinned) {
    return new TimingResult(key, Latency.of(summary), throughput, memoryBytes, Outcome.measured(stable, pinned));
  }

  static TimingResult failed(Point key, String error) {
    return new TimingResult(key, Latency.NONE, 0, -1, Outcome.failed(error));
  }

  public String model() { return point.model(); }
  public String version() { return point.version(); }
  public String host() { return point.host(); }
  public String pool() { return point.pool(); }
  public int size() { return point.size(); }
  public int batch() { return point.batch(); }
  public String provider() { return point.provider(); }
  public double p50Ms() { return latency.p50Ms(); }
  public double p90Ms() { return latency.p90Ms(); }
  public double p99Ms() { return latency.p99Ms(); }
  public double meanMs() { return latency.meanMs(); }
  public int samples() { return latency.samples(); }
  public boolean stable() { return outcome.stable(); }
  public boolean pinned() { return outcome.pinned(); }
  public boolean ok() { return outcome.ok(); }
  public String error() { return outcome.error(); }
}

package io.partita.profiler.measure;

import io.partita.profiler.stats.LatencySummary;

/**
 * One measured point: a model version on a partition of {@code size} resources of a pool, at one
 * batch size, with one execution provider. A configuration that failed is a result with
 * {@code ok = false}, the error, and no numbers (NaN latencies, zero throughput and samples); it is
 * never filled in with invented figures.
 *
 * @param pool "cpu" or "gpu"
 * @param size partition size: CPU cores, or GPUs
 * @param provider execution provider, e.g. "CPU", "CUDA"
 * @param samples timed runs
 * @param throughput items per second (batch size times runs per second); for a partition of several
 *     GPUs, the sum over its devices
 * @param memoryBytes resident memory one instance added (session, arena after warm-up, inputs); -1
 *     when it could not be read
 * @param stable whether the median met the stability rule before the time budget ran out
 * @param pinned whether every thread was pinned to its own core as asked
 */
public record TimingResult(
    String model,
    String version,
    String host,
    String pool,
    int size,
    int batch,
    String provider,
    double p50Ms,
    double p90Ms,
    double p99Ms,
    double meanMs,
    int samples,
    double throughput,
    long memoryBytes,
    boolean stable,
    boolean pinned,
    boolean ok,
    String error) {

  static TimingResult measured(PointKey key, LatencySummary summary, double throughput, long memoryBytes,
                               boolean stable, boolean pinned) {
    return new TimingResult(key.model(), key.version(), key.host(), key.pool(), key.size(), key.batch(), key.provider(),
        summary.p50Millis(), summary.p90Millis(), summary.p99Millis(), summary.meanMillis(), summary.samples(),
        throughput, memoryBytes, stable, pinned, true, null);
  }

  static TimingResult failed(PointKey key, String error) {
    return new TimingResult(key.model(), key.version(), key.host(), key.pool(), key.size(), key.batch(), key.provider(),
        Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, 0, -1, false, false, false, error);
  }

  /** What identifies a point. */
  record PointKey(String model, String version, String host, String pool, int size, int batch, String provider) {}
}

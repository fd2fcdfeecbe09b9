package io.partita.profiler.env;

/**
 * The host's baseline benchmark: the best throughput the hill-climbing search found on the fixed
 * reference model, and how much of the grid it measured to find it. Hosts are compared by
 * {@link #throughput()}; planners scale timings from one host to another by the ratio.
 *
 * @param throughput reference-model items per second at the best point found
 * @param threads intra-op threads at that point
 * @param batch batch size at that point
 * @param pointsMeasured grid points the search measured
 * @param gridSize points in the full grid
 * @param referenceModel which reference model (name and shape), so scores are only compared like for like
 */
public record BaselineScore(double throughput, int threads, int batch, int pointsMeasured, int gridSize, String referenceModel) {}

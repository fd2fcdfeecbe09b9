package io.partita.planning.grouping;

/**
 * One candidate grouping with the figure it is compared by.
 *
 * @param grouping the grouping with its predicted figures (sums of single-size points)
 * @param basis whether {@code expectedThroughputPerSecond} was measured or predicted
 * @param expectedThroughputPerSecond the measured aggregate throughput, or the prediction times
 *     {@code interferenceFactor}; either times {@code servingFactor} when not measured from serving
 * @param expectedLatencyMs the measured largest median latency, or the predicted one; either divided
 *     by {@code servingFactor} when not measured from serving
 * @param measuredThroughputPerSecond the grouping-mode measurement, or null when never measured
 * @param interferenceFactor {@code f(p)} applied to the prediction (1 when measured or uncorrected)
 * @param source who measured it when measured, else null
 * @param servingFactor what serving costs on the pool ({@link ServingFactor#factor()}), applied to
 *     an idle or predicted figure to compare it with figures measured from serving; 1 when not applied
 */
public record AssessedGrouping(
    Grouping grouping,
    ChoiceBasis basis,
    double expectedThroughputPerSecond,
    double expectedLatencyMs,
    Double measuredThroughputPerSecond,
    double interferenceFactor,
    MeasurementSource source,
    double servingFactor) {

  public boolean measured() {
    return basis == ChoiceBasis.MEASURED;
  }
}

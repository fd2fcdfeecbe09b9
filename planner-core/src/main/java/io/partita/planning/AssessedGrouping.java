package io.partita.planning;

/**
 * One candidate grouping with the figure it is compared by.
 *
 * @param grouping the grouping with its predicted figures (sums of single-size points)
 * @param basis whether {@code expectedThroughputPerSecond} was measured or predicted
 * @param expectedThroughputPerSecond the measured aggregate throughput, or the prediction times
 *     {@code interferenceFactor}
 * @param expectedLatencyMs the measured largest median latency, or the predicted one
 * @param measuredThroughputPerSecond the grouping-mode measurement, or null when never measured
 * @param interferenceFactor {@code f(p)} applied to the prediction (1 when measured or uncorrected)
 * @param source who measured it when measured, else null
 */
public record AssessedGrouping(
    Grouping grouping,
    ChoiceBasis basis,
    double expectedThroughputPerSecond,
    double expectedLatencyMs,
    Double measuredThroughputPerSecond,
    double interferenceFactor,
    MeasurementSource source) {

  public boolean measured() {
    return basis == ChoiceBasis.MEASURED;
  }
}

package io.partita.planning.grouping;

/**
 * What one grouping-mode measurement says about partitions running together: a grouping of
 * {@code partitions} partitions gave {@code measuredThroughput} where the single-size points,
 * measured one at a time, predicted {@code predictedThroughput}.
 */
public record InterferenceSample(int partitions, double measuredThroughput, double predictedThroughput) {
  public InterferenceSample {
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions: must be >= 1, was " + partitions);
    }
    if (!(measuredThroughput > 0) || Double.isInfinite(measuredThroughput)) {
      throw new IllegalArgumentException("measuredThroughput: must be a finite number > 0, was " + measuredThroughput);
    }
    if (!(predictedThroughput > 0) || Double.isInfinite(predictedThroughput)) {
      throw new IllegalArgumentException("predictedThroughput: must be a finite number > 0, was " + predictedThroughput);
    }
  }

  /** {@code measured / predicted}. */
  public double ratio() {
    return measuredThroughput / predictedThroughput;
  }
}

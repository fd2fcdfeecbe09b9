package io.partita.profiler.measure;

import java.util.List;

/**
 * A whole grouping measured at once: its partitions ran concurrently, each its own session pinned
 * to its own cores, for the same time window. A grouping that could not run has {@code ok = false},
 * the error, no partitions, zero throughput and memory -1.
 *
 * <p>The flat accessors ({@link #model()}, {@link #sizes()}, ...) read through {@link #grouping()}.
 *
 * @param grouping what was measured, where and how
 * @param partitions one result per partition, in the order of {@code sizes}
 * @param aggregateThroughput items per second summed over the partitions
 * @param memoryBytes resident memory all instances together added; -1 when unknown
 */
public record GroupingResult(
    Grouping grouping,
    List<TimingResult> partitions,
    double aggregateThroughput,
    long memoryBytes,
    boolean ok,
    String error) {

  /**
   * What a grouping measurement is: the model version, where it ran and how.
   *
   * @param sizes the grouping, e.g. [1, 1]
   */
  public record Grouping(String model, String version, String host, String pool, List<Integer> sizes, int batch,
      String provider) {
    public Grouping {
      sizes = List.copyOf(sizes);
    }
  }

  public GroupingResult {
    partitions = List.copyOf(partitions);
  }

  static GroupingResult failed(Grouping grouping, String error) {
    return new GroupingResult(grouping, List.of(), 0, -1, false, error);
  }

  public String model() { return grouping.model(); }
  public String version() { return grouping.version(); }
  public String host() { return grouping.host(); }
  public String pool() { return grouping.pool(); }
  public List<Integer> sizes() { return grouping.sizes(); }
  public int batch() { return grouping.batch(); }
  public String provider() { return grouping.provider(); }
}

package io.partita.planning.grouping;

/** Who measured a grouping (grouping mode: every partition running together). */
public enum MeasurementSource {
  /** The profiler ran the grouping on purpose, every partition busy at once. */
  PROFILER,
  /**
   * The planner read what the grouping's serving slots ran under real traffic ({@link ServingRate}):
   * the grouping at the load it served, its partitions overlapping as the traffic made them.
   */
  SERVING
}

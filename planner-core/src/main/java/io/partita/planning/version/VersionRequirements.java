package io.partita.planning.version;

/**
 * A service's requirements on a version; each {@code null} when not required.
 *
 * @param latencyObjectiveMs the (measured or predicted) latency must be at most this
 * @param minAccuracy the accuracy must be at least this (unknown accuracy fails it)
 * @param memoryCapBytes the declared memory must be at most this
 * @param objective what is optimised among the versions meeting the rest ({@code null} = {@link
 *     VersionObjective#LATENCY})
 */
public record VersionRequirements(
    Double latencyObjectiveMs, Double minAccuracy, Long memoryCapBytes, VersionObjective objective) {
  public static final VersionRequirements NONE = new VersionRequirements(null, null, null);

  public VersionRequirements {
    objective = objective == null ? VersionObjective.LATENCY : objective;
  }

  /** Requirements with the default objective (the fastest qualifying version). */
  public VersionRequirements(Double latencyObjectiveMs, Double minAccuracy, Long memoryCapBytes) {
    this(latencyObjectiveMs, minAccuracy, memoryCapBytes, VersionObjective.LATENCY);
  }
}

package io.partita.planning;

/**
 * A service's requirements on a version; each {@code null} when not required.
 *
 * @param latencyObjectiveMs the (measured or predicted) latency must be at most this
 * @param minAccuracy the accuracy must be at least this (unknown accuracy fails it)
 * @param memoryCapBytes the declared memory must be at most this
 */
public record VersionRequirements(Double latencyObjectiveMs, Double minAccuracy, Long memoryCapBytes) {
  public static final VersionRequirements NONE = new VersionRequirements(null, null, null);
}

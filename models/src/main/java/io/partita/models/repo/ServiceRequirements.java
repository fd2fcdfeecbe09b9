package io.partita.models.repo;

import java.util.List;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * What a service model asks of the version of its base model that a host runs, as its manifest
 * entry declares it; the planner's version choice (method 4) reads it from the catalog.
 *
 * @param objective {@value #LATENCY} (the default: the fastest version meeting the rest) or
 *     {@value #ACCURACY} (the most accurate version whose latency meets {@code latencyObjectiveMs})
 * @param latencyObjectiveMs the latency, measured or predicted for the host, a version must meet
 * @param minAccuracy the declared accuracy a version must have at least
 * @param memoryCapBytes the declared memory a version may have at most
 */
public record ServiceRequirements(
    String objective, OptionalDouble latencyObjectiveMs, OptionalDouble minAccuracy, OptionalLong memoryCapBytes) {
  public static final String LATENCY = "latency";
  public static final String ACCURACY = "accuracy";
  /** The objectives a manifest may name; the planner's {@code VersionObjective} has the same names. */
  public static final List<String> OBJECTIVES = List.of(LATENCY, ACCURACY);
  /** No requirement, the default objective. */
  public static final ServiceRequirements NONE =
      new ServiceRequirements(LATENCY, OptionalDouble.empty(), OptionalDouble.empty(), OptionalLong.empty());

  public ServiceRequirements {
    Objects.requireNonNull(latencyObjectiveMs, "latencyObjectiveMs");
    Objects.requireNonNull(minAccuracy, "minAccuracy");
    Objects.requireNonNull(memoryCapBytes, "memoryCapBytes");
    if (!OBJECTIVES.contains(objective)) {
      throw new IllegalArgumentException("objective: '" + objective + "' is not one of " + OBJECTIVES);
    }
  }
}

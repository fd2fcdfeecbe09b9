package io.partita.models.repo;

import java.util.Objects;
import java.util.Optional;

/**
 * What a client asks for by name: a base model plus an optional weight file. A model without a
 * manifest (or whose manifest lists no service models) gets one service model of its own name with
 * no weight file.
 *
 * @param instances instances wanted (the manifest's {@code instances}, default 1): the planner
 *     places each on its own slot of the base model
 * @param requirements what it asks of the version of the base model a host runs (the manifest's
 *     {@code objective}, {@code latencyObjectiveMs}, {@code minAccuracy}, {@code memoryCapBytes})
 */
public record ServiceModelEntry(
    String name, String baseModel, Optional<WeightFile> weightFile, int instances, ServiceRequirements requirements) {

  public ServiceModelEntry {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(baseModel, "baseModel");
    Objects.requireNonNull(weightFile, "weightFile");
    Objects.requireNonNull(requirements, "requirements");
    if (instances < 1) {
      throw new IllegalArgumentException("service model " + name + ": instances must be at least 1, was " + instances);
    }
  }

  /** No requirements on the version (the default objective). */
  public ServiceModelEntry(String name, String baseModel, Optional<WeightFile> weightFile, int instances) {
    this(name, baseModel, weightFile, instances, ServiceRequirements.NONE);
  }

  /** One instance wanted. */
  public ServiceModelEntry(String name, String baseModel, Optional<WeightFile> weightFile) {
    this(name, baseModel, weightFile, 1);
  }
}

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
 */
public record ServiceModelEntry(String name, String baseModel, Optional<WeightFile> weightFile, int instances) {

  public ServiceModelEntry {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(baseModel, "baseModel");
    Objects.requireNonNull(weightFile, "weightFile");
    if (instances < 1) {
      throw new IllegalArgumentException("service model " + name + ": instances must be at least 1, was " + instances);
    }
  }

  /** One instance wanted. */
  public ServiceModelEntry(String name, String baseModel, Optional<WeightFile> weightFile) {
    this(name, baseModel, weightFile, 1);
  }
}

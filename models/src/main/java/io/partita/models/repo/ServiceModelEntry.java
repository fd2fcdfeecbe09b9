package io.partita.models.repo;

import java.util.Objects;
import java.util.Optional;

/**
 * What a client asks for by name: a base model plus an optional weight file. A model without a
 * manifest (or whose manifest lists no service models) gets one service model of its own name with
 * no weight file.
 */
public record ServiceModelEntry(String name, String baseModel, Optional<WeightFile> weightFile) {

  public ServiceModelEntry {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(baseModel, "baseModel");
    Objects.requireNonNull(weightFile, "weightFile");
  }
}

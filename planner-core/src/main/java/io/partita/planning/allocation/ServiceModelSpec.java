package io.partita.planning.allocation;

/**
 * A service model a client asks for by name: a base model plus an optional weight file, and the
 * number of instances wanted.
 *
 * @param weightFile {@code null} for the bare base model
 */
public record ServiceModelSpec(String id, String baseModel, WeightFile weightFile, int instances) {
  public ServiceModelSpec {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("service model id: must not be blank");
    }
    if (instances < 0) {
      throw new IllegalArgumentException("instances: must be >= 0");
    }
  }
}

package io.partita.planning.mapping;

/** One model of a service's pipeline and the request rate it must sustain. */
public record ServiceStage(String modelId, double requestsPerSecond) {
  public ServiceStage {
    if (modelId == null || modelId.isBlank()) {
      throw new IllegalArgumentException("modelId: must not be blank");
    }
    if (!(requestsPerSecond >= 0) || Double.isInfinite(requestsPerSecond)) {
      throw new IllegalArgumentException("requestsPerSecond: must be a finite number >= 0");
    }
  }
}

package io.partita.planning.grouping;

import io.partita.planning.ProfilePoint;
import java.util.List;

/**
 * One model that wants a share of a pool: its request rate and its own profile on that pool.
 *
 * @param modelId the model (version)
 * @param requestsPerSecond the demand it must sustain, from traffic; {@code >= 0}
 * @param batchSize {@code b} of its profile
 * @param profile its measured sizes on this pool
 * @param sloMs its per-partition latency objective, or {@code null}
 */
public record ModelDemand(
    String modelId, double requestsPerSecond, int batchSize, List<ProfilePoint> profile, Double sloMs) {

  public ModelDemand {
    if (modelId == null || modelId.isBlank()) {
      throw new IllegalArgumentException("modelId: must not be blank");
    }
    if (!(requestsPerSecond >= 0) || Double.isInfinite(requestsPerSecond)) {
      throw new IllegalArgumentException("requestsPerSecond: must be a finite number >= 0");
    }
    profile = List.copyOf(profile);
  }
}

package io.partita.planning.version;

import java.util.Set;

/**
 * One candidate version of a model.
 *
 * @param requiredProviders every execution provider it needs
 * @param memoryBytes its declared memory
 * @param accuracy its accuracy score, or {@code null} when unknown (counts as lowest)
 */
public record ModelVersion(
    String versionId, Set<String> requiredProviders, String precision, long memoryBytes, Double accuracy) {
  public ModelVersion {
    if (versionId == null || versionId.isBlank()) {
      throw new IllegalArgumentException("versionId: must not be blank");
    }
    requiredProviders = Set.copyOf(requiredProviders);
  }
}

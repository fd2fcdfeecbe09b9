package io.partita.models.repo;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One model of the repository: its versions in ascending order (numeric ids numerically, then the
 * rest by name) and the service models built on it. All versions share one signature (the scan
 * refuses a model whose versions differ).
 *
 * @param manifest the manifest file, if the model has one
 */
public record ModelEntry(
    String name,
    Path dir,
    Optional<Path> manifest,
    Map<String, VersionEntry> versions,
    List<ServiceModelEntry> serviceModels) {

  public ModelEntry {
    versions = Collections.unmodifiableMap(new LinkedHashMap<>(versions));
    serviceModels = List.copyOf(serviceModels);
    if (versions.isEmpty()) {
      throw new IllegalArgumentException("model " + name + " has no versions");
    }
  }

  public Optional<VersionEntry> version(String id) {
    return Optional.ofNullable(versions.get(id));
  }

  /** The highest version by the ordering above. */
  public VersionEntry latest() {
    VersionEntry last = null;
    for (VersionEntry v : versions.values()) {
      last = v;
    }
    return last;
  }

  /** The inputs and outputs every version answers. */
  public ModelSignature signature() {
    return latest().signature();
  }
}

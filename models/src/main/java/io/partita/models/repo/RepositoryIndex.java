package io.partita.models.repo;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * An immutable snapshot of a model repository as {@link ModelRepository#scan} found it: models by
 * name and service models by name (both sorted by name). A later change on disk needs a new scan.
 */
public record RepositoryIndex(
    Path root, Map<String, ModelEntry> models, Map<String, ServiceModelEntry> serviceModels) {

  public RepositoryIndex {
    models = Collections.unmodifiableMap(new LinkedHashMap<>(models));
    serviceModels = Collections.unmodifiableMap(new LinkedHashMap<>(serviceModels));
  }

  public Optional<ModelEntry> model(String name) {
    return Optional.ofNullable(models.get(name));
  }

  public Optional<ServiceModelEntry> serviceModel(String name) {
    return Optional.ofNullable(serviceModels.get(name));
  }
}

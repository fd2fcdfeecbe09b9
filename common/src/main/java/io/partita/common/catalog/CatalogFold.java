package io.partita.common.catalog;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ServiceModel;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.VersionEntry;
import io.partita.models.repo.WeightFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Folds the versions a catalog reader accepted and the catalog's service model records into a
 * {@link RepositoryIndex}, as a repository scan would give it: versions in {@link
 * ModelRepository#versionKey} order, service models offered only where their base model has a
 * version. The gateway's and the worker's catalog readers differ only in where files are
 * ({@code weightFile}, {@code modelDir}). Pure.
 */
public final class CatalogFold {
  private CatalogFold() {}

  public static RepositoryIndex index(Path root, Collection<VersionEntry> versions, Collection<ServiceModel> services,
      Function<String, Path> modelDir, Function<CatalogWeightFile, Optional<WeightFile>> weightFile) {
    Map<String, List<VersionEntry>> byModel = new TreeMap<>();
    versions.forEach(v -> byModel.computeIfAbsent(v.model(), m -> new ArrayList<>()).add(v));
    Map<String, List<ServiceModelEntry>> servicesByModel = new TreeMap<>();
    Map<String, ServiceModelEntry> offered = new TreeMap<>();
    for (ServiceModel s : services) {
      if (!byModel.containsKey(s.getBaseModel())) {
        continue;
      }
      ServiceModelEntry entry = new ServiceModelEntry(s.getName(), s.getBaseModel(), weightFile.apply(s.getWeightFile()),
          Math.max(1, s.getInstances()));
      servicesByModel.computeIfAbsent(s.getBaseModel(), m -> new ArrayList<>()).add(entry);
      offered.put(entry.name(), entry);
    }
    Map<String, ModelEntry> models = new TreeMap<>();
    byModel.forEach((model, list) -> {
      list.sort(Comparator.comparing(v -> ModelRepository.versionKey(v.version())));
      Map<String, VersionEntry> ordered = new LinkedHashMap<>();
      list.forEach(v -> ordered.put(v.version(), v));
      models.put(model, new ModelEntry(model, modelDir.apply(model), Optional.empty(), ordered,
          servicesByModel.getOrDefault(model, List.of())));
    });
    return new RepositoryIndex(root, models, offered);
  }
}

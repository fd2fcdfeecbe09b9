package io.partita.profiler.run;

import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryException;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.VersionEntry;
import io.partita.profiler.measure.ModelRef;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Finds model versions through the models module's repository scan ({@link ModelRepository#scan}),
 * so the profiler measures exactly the files the workers serve, with the same version order. The
 * index is kept; a model or version it does not know triggers one re-scan (a model added since),
 * and only then is the lookup refused.
 */
public final class RepositoryModels {

  private final Path root;
  private volatile RepositoryIndex index;

  private RepositoryModels(Path root, RepositoryIndex index) {
    this.root = root;
    this.index = index;
  }

  /** Scans the repository now; a repository the scan refuses is a {@link RepositoryException}. */
  public static RepositoryModels scan(Path root) {
    return new RepositoryModels(root, ModelRepository.scan(root));
  }

  public Path root() {
    return root;
  }

  /**
   * The versions to measure: {@code version}, or every version in repository order when it is null.
   */
  public List<ModelRef> resolve(String model, String version) throws ModelLookupException {
    Optional<List<ModelRef>> found = find(index, model, version);
    if (found.isPresent()) {
      return found.get();
    }
    try {
      index = ModelRepository.scan(root);
    } catch (RepositoryException e) {
      throw new ModelLookupException("model-repo", "the model repository cannot be scanned: " + e.getMessage());
    }
    found = find(index, model, version);
    if (found.isPresent()) {
      return found.get();
    }
    Optional<ModelEntry> entry = index.model(model);
    if (entry.isEmpty()) {
      throw new ModelLookupException("model", "no model '" + model + "' in the model repository " + index.root()
          + " (models: " + index.models().keySet() + ")");
    }
    throw new ModelLookupException("version", "no version '" + version + "' of model '" + model + "' (versions: "
        + entry.get().versions().keySet() + ")");
  }

  private static Optional<List<ModelRef>> find(RepositoryIndex index, String model, String version) {
    Optional<ModelEntry> entry = index.model(model);
    if (entry.isEmpty()) {
      return Optional.empty();
    }
    if (version == null) {
      return Optional.of(entry.get().versions().values().stream().map(RepositoryModels::ref).toList());
    }
    return entry.get().version(version).map(v -> List.of(ref(v)));
  }

  /** The latest version of a model, for the command line's default. */
  public ModelRef latest(String model) throws ModelLookupException {
    List<ModelRef> all = resolve(model, null);
    return all.get(all.size() - 1);
  }

  private static ModelRef ref(VersionEntry v) {
    return ModelRef.ofFile(v.model(), v.version(), v.modelFile());
  }
}

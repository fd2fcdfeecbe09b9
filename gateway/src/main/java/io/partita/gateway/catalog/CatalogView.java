package io.partita.gateway.catalog;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.catalog.CatalogFold;
import io.partita.common.catalog.CatalogSignatures;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.Precision;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.VersionEntry;
import io.partita.models.repo.WeightFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The catalog as a gateway without a model repository sees it: the latest {@link ModelVersion} per
 * key of {@code <prefix>.catalog.models} and the latest {@link ServiceModel} per key of
 * {@code <prefix>.catalog.services}, folded into a {@link RepositoryIndex} of what can be called.
 * A null value (a tombstone) removes its key. Pure: no Kafka and no files; {@link CatalogReader}
 * feeds it.
 *
 * <p>What it guarantees: a version is offered only with the signature its record carries
 * (ModelVersion v2); a record written before v2 has no inputs and is left out (logged once per
 * key), since this gateway has no file to read it from. A service model is offered only while its
 * base model has at least one offered version; a model with versions but no service model record is
 * not callable. Versions are ordered as a repository scan orders them (numeric ids numerically,
 * then the rest by name), so "the latest" means the same thing with and without the files.
 *
 * <p>What it does not do: open the files. The {@link VersionEntry#modelFile()} and
 * {@link WeightFile#path()} of its entries are the catalog's URIs as paths, never read by the
 * gateway; {@link ModelEntry#dir()} is the model's name.
 *
 * <p>Writers ({@link #putVersion} and the rest, then {@link #rebuild}) are called by one thread;
 * {@link #current()} may be read by any.
 */
public final class CatalogView implements ModelCatalog {
  private static final Logger log = LoggerFactory.getLogger(CatalogView.class);
  private static final RepositoryIndex EMPTY = new RepositoryIndex(Path.of("catalog"), Map.of(), Map.of());

  private final Map<String, ModelVersion> versions = new TreeMap<>();
  private final Map<String, ServiceModel> services = new TreeMap<>();
  private final Set<String> warnedWithoutSignature = new HashSet<>();
  private volatile RepositoryIndex current = EMPTY;

  @Override
  public RepositoryIndex current() {
    return current;
  }

  /** A version record under its key ({@code model/version}); null removes the key. */
  public void putVersion(String key, ModelVersion version) {
    if (version == null) {
      versions.remove(key);
    } else {
      versions.put(key, version);
    }
  }

  /** A service model record under its key (its name); null removes the key. */
  public void putService(String key, ServiceModel service) {
    if (service == null) {
      services.remove(key);
    } else {
      services.put(key, service);
    }
  }

  /**
   * Folds the records into a new snapshot and makes it {@link #current()}.
   *
   * @return whether the offered models or versions changed
   */
  public boolean rebuild() {
    List<VersionEntry> accepted = new ArrayList<>();
    for (Map.Entry<String, ModelVersion> e : versions.entrySet()) {
      entry(e.getKey(), e.getValue()).ifPresent(accepted::add);
    }
    RepositoryIndex next = CatalogFold.index(EMPTY.root(), accepted, services.values(), Path::of, CatalogView::weightFile);
    RepositoryIndex before = current;
    current = next;
    return !sameOffer(before, next);
  }

  private Optional<VersionEntry> entry(String key, ModelVersion v) {
    Optional<ModelSignature> signature;
    try {
      signature = CatalogSignatures.fromCatalog(v);
    } catch (IllegalArgumentException e) {
      if (warnedWithoutSignature.add(key)) {
        log.warn("Catalog version {} left out: {}", key, e.getMessage());
      }
      return Optional.empty();
    }
    if (signature.isEmpty()) {
      if (warnedWithoutSignature.add(key)) {
        log.warn("Catalog version {} left out: its record carries no signature (written before ModelVersion v2);"
            + " publish the catalog again with this release, or give this gateway the model repository (model.repo)", key);
      }
      return Optional.empty();
    }
    Precision precision = Precision.parse(v.getPrecision()).orElse(Precision.FP32);
    return Optional.of(new VersionEntry(v.getModel(), v.getVersion(), Path.of(v.getUri()), v.getUri(), v.getSha256(),
        precision, v.getProviders(),
        v.getAccuracy() == null ? OptionalDouble.empty() : OptionalDouble.of(v.getAccuracy()),
        v.getMemoryBytes() == null ? OptionalLong.empty() : OptionalLong.of(v.getMemoryBytes()),
        signature.get()));
  }

  private static Optional<WeightFile> weightFile(CatalogWeightFile f) {
    return f == null ? Optional.empty() : Optional.of(new WeightFile(f.getUri(), Path.of(f.getUri()), f.getSha256()));
  }

  private static boolean sameOffer(RepositoryIndex a, RepositoryIndex b) {
    if (!a.serviceModels().equals(b.serviceModels()) || !a.models().keySet().equals(b.models().keySet())) {
      return false;
    }
    for (String m : a.models().keySet()) {
      if (!a.models().get(m).versions().equals(b.models().get(m).versions())) {
        return false;
      }
    }
    return true;
  }
}

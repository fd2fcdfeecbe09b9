package io.partita.gateway.catalog;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.TensorSignature;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.Precision;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import io.partita.models.repo.WeightFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
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
  private final java.util.Set<String> warnedWithoutSignature = new java.util.HashSet<>();
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
    Map<String, List<VersionEntry>> byModel = new TreeMap<>();
    for (Map.Entry<String, ModelVersion> e : versions.entrySet()) {
      Optional<VersionEntry> entry = entry(e.getKey(), e.getValue());
      entry.ifPresent(v -> byModel.computeIfAbsent(v.model(), m -> new ArrayList<>()).add(v));
    }
    Map<String, List<ServiceModelEntry>> servicesByModel = new TreeMap<>();
    Map<String, ServiceModelEntry> offered = new TreeMap<>();
    for (ServiceModel s : services.values()) {
      if (!byModel.containsKey(s.getBaseModel())) {
        continue;
      }
      ServiceModelEntry entry = new ServiceModelEntry(s.getName(), s.getBaseModel(), weightFile(s.getWeightFile()));
      servicesByModel.computeIfAbsent(s.getBaseModel(), m -> new ArrayList<>()).add(entry);
      offered.put(entry.name(), entry);
    }
    Map<String, ModelEntry> models = new TreeMap<>();
    byModel.forEach((model, list) -> {
      list.sort(Comparator.comparing(v -> versionKey(v.version())));
      Map<String, VersionEntry> ordered = new LinkedHashMap<>();
      list.forEach(v -> ordered.put(v.version(), v));
      models.put(model, new ModelEntry(model, Path.of(model), Optional.empty(), ordered,
          servicesByModel.getOrDefault(model, List.of())));
    });
    RepositoryIndex next = new RepositoryIndex(Path.of("catalog"), models, offered);
    RepositoryIndex before = current;
    current = next;
    return !sameOffer(before, next);
  }

  private Optional<VersionEntry> entry(String key, ModelVersion v) {
    Optional<ModelSignature> signature;
    try {
      signature = signature(v);
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

  /**
   * The signature a version record carries; empty for a record written before {@code ModelVersion}
   * v2 (no inputs). The same conversion as the planner's {@code CatalogSignatures.fromCatalog}: the
   * module rules keep the gateway from the planner, and the models module from Avro.
   *
   * @throws IllegalArgumentException naming the version and field when a datatype is not an Open
   *     Inference Protocol one
   */
  public static Optional<ModelSignature> signature(ModelVersion v) {
    if (v.getInputs().isEmpty()) {
      return Optional.empty();
    }
    String where = v.getModel() + "/" + v.getVersion();
    return Optional.of(new ModelSignature(specs(v.getInputs(), where + ".inputs"), specs(v.getOutputs(), where + ".outputs")));
  }

  private static List<TensorSpec> specs(List<TensorSignature> list, String where) {
    List<TensorSpec> out = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      TensorSignature t = list.get(i);
      String at = where + "[" + i + "].datatype";
      ElementType type = ElementType.fromOipDatatype(t.getDatatype()).orElseThrow(() ->
          new IllegalArgumentException(at + ": '" + t.getDatatype() + "' is not an Open Inference Protocol datatype"));
      out.add(new TensorSpec(t.getName(), type, t.getShape()));
    }
    return out;
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

  /** Numeric ids first, in numeric order, then the rest by name (as {@code ModelRepository} orders them). */
  static String versionKey(String s) {
    if (s.matches("[0-9]{1,18}")) {
      return "0" + String.format("%019d", Long.parseLong(s));
    }
    return "1" + s;
  }
}

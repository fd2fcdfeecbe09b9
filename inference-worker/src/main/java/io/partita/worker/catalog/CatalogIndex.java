package io.partita.worker.catalog;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.catalog.CatalogFold;
import io.partita.common.catalog.CatalogSignatures;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.Precision;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.VersionEntry;
import io.partita.models.repo.WeightFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * The models a worker without a model repository serves: the catalog's latest {@link ModelVersion}
 * and {@link ServiceModel} records folded into a {@link RepositoryIndex}. Pure: no Kafka, no files
 * ({@code io.partita.worker.kafka.CatalogSnapshot} reads the records; the slots fetch the files).
 *
 * <p>What an entry means here: a {@link VersionEntry#relativePath()} and a {@link WeightFile#relativePath()}
 * hold the catalog's URI ({@code http(s):}, {@code file:} or a repository path), which the slots
 * hand to {@code ModelFetcher} with the record's sha256; {@link VersionEntry#modelFile()} and
 * {@link WeightFile#path()} are where the checked copy lies in the cache ({@code <cache>/<sha256>}),
 * which holds nothing until a slot needs it. A version's signature is the record's inputs and
 * outputs (ModelVersion v2); its overridable parameters are read from the fetched file when a
 * session opens. A version record without a signature (written before v2) is left out and named in
 * {@link Folded#leftOut()}; a service model whose base model has no version is left out too.
 */
public final class CatalogIndex {
  private CatalogIndex() {}

  /**
   * @param index the models offered
   * @param leftOut versions (model/version) left out, each with the reason
   */
  public record Folded(RepositoryIndex index, Map<String, String> leftOut) {}

  /**
   * @param versions latest version records by key (model/version)
   * @param services latest service model records by name
   * @param root the index's root: the model repository when this worker has one, else its cache directory
   * @param cache the model cache directory the files are fetched into
   */
  public static Folded fold(Map<String, ModelVersion> versions, Map<String, ServiceModel> services, Path root, Path cache) {
    Map<String, String> leftOut = new TreeMap<>();
    List<VersionEntry> accepted = new ArrayList<>();
    for (Map.Entry<String, ModelVersion> e : versions.entrySet()) {
      ModelVersion v = e.getValue();
      Optional<ModelSignature> signature;
      try {
        signature = CatalogSignatures.fromCatalog(v);
      } catch (IllegalArgumentException ex) {
        leftOut.put(e.getKey(), ex.getMessage());
        continue;
      }
      if (signature.isEmpty()) {
        leftOut.put(e.getKey(), "its record carries no signature (written before ModelVersion v2); publish the catalog"
            + " again with this release");
        continue;
      }
      if (!v.getSha256().matches("[0-9a-fA-F]{64}")) {
        leftOut.put(e.getKey(), "sha256 '" + v.getSha256() + "' is not 64 hex digits");
        continue;
      }
      VersionEntry entry = new VersionEntry(v.getModel(), v.getVersion(), cache.resolve(v.getSha256().toLowerCase(Locale.ROOT)),
          v.getUri(), v.getSha256(), Precision.parse(v.getPrecision()).orElse(Precision.FP32), v.getProviders(),
          v.getAccuracy() == null ? OptionalDouble.empty() : OptionalDouble.of(v.getAccuracy()),
          v.getMemoryBytes() == null ? OptionalLong.empty() : OptionalLong.of(v.getMemoryBytes()), signature.get());
      accepted.add(entry);
    }
    return new Folded(CatalogFold.index(root, accepted, services.values(), root::resolve, f -> weightFile(f, cache)),
        leftOut);
  }

  private static Optional<WeightFile> weightFile(CatalogWeightFile f, Path cache) {
    return f == null ? Optional.empty()
        : Optional.of(new WeightFile(f.getUri(), cache.resolve(f.getSha256().toLowerCase(Locale.ROOT)), f.getSha256()));
  }
}

package io.partita.gateway.catalog;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.TensorSignature;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import java.util.List;

/**
 * Catalog records as the planner's CatalogPublisher writes them (ModelVersion v2 with signatures),
 * built from a scanned repository's entries, for tests that feed a gateway its catalog. The
 * gateway module cannot use the publisher itself (services never see each other).
 */
public final class CatalogRecords {
  private CatalogRecords() {}

  public static ModelVersion version(VersionEntry v) {
    return ModelVersion.newBuilder().setModel(v.model()).setVersion(v.version()).setUri(v.relativePath())
        .setSha256(v.sha256()).setPrecision(v.precision().text()).setProviders(v.providers()).setAccuracy(null)
        .setMemoryBytes(null).setInputs(signatures(v.signature().inputs())).setOutputs(signatures(v.signature().outputs()))
        .build();
  }

  /** A version record without a signature, as written before ModelVersion v2. */
  public static ModelVersion versionWithoutSignature(VersionEntry v) {
    ModelVersion r = version(v);
    r.setInputs(List.of());
    r.setOutputs(List.of());
    return r;
  }

  public static ServiceModel service(ServiceModelEntry s) {
    return ServiceModel.newBuilder().setName(s.name()).setBaseModel(s.baseModel())
        .setWeightFile(s.weightFile().map(w -> new CatalogWeightFile(w.relativePath(), w.sha256(), 0L)).orElse(null))
        .setInstances(1).setService(null).setLatencyObjectiveMs(null).setMinAccuracy(null).setMemoryCapBytes(null).build();
  }

  public static List<TensorSignature> signatures(List<TensorSpec> specs) {
    return specs.stream().map(t -> TensorSignature.newBuilder().setName(t.name()).setDatatype(t.type().oipDatatype())
        .setShape(List.copyOf(t.shape())).build()).toList();
  }

  public static ModelSignature signatureOf(ModelVersion v) {
    return io.partita.common.catalog.CatalogSignatures.fromCatalog(v).orElseThrow();
  }
}

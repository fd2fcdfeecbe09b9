package io.partita.planner.catalog;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.VersionEntry;
import io.partita.planner.plan.Keys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Turns a scanned model repository into catalog records: one {@link ModelVersion} per model
 * version on {@code <prefix>.catalog.models} (key model/version), with its inputs and outputs read
 * once here, where the file is ({@link CatalogSignatures}), and one {@link ServiceModel} per
 * service model on {@code <prefix>.catalog.services} (key name, one instance wanted, no service
 * grouping or requirements: the repository's manifests do not declare them). Both topics are
 * compacted, so publishing the same repository again only adds duplicates that compaction removes;
 * the planner compares plan bytes, so it plans nothing new. Entries that left the repository are
 * not deleted (publish a tombstone for their key to remove them).
 */
public final class CatalogPublisher {
  private CatalogPublisher() {}

  /** The catalog records of a repository, models first (timing events are checked against them). */
  public static List<ProducerRecord<String, byte[]>> records(RepositoryIndex index, Topics topics, Codecs codecs) {
    Topic<ModelVersion> versions = topics.catalogModels(codecs);
    Topic<ServiceModel> services = topics.catalogServices(codecs);
    List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
    for (ModelEntry model : index.models().values()) {
      for (VersionEntry v : model.versions().values()) {
        ModelVersion record = ModelVersion.newBuilder().setModel(v.model()).setVersion(v.version())
            .setUri(v.relativePath()).setSha256(v.sha256()).setPrecision(v.precision().text())
            .setProviders(v.providers())
            .setAccuracy(v.accuracy().isPresent() ? v.accuracy().getAsDouble() : null)
            .setMemoryBytes(v.memoryBytes().isPresent() ? v.memoryBytes().getAsLong() : null)
            .setInputs(CatalogSignatures.toCatalog(v.signature().inputs()))
            .setOutputs(CatalogSignatures.toCatalog(v.signature().outputs())).build();
        out.add(versions.record(Keys.modelVersion(v.model(), v.version()), record));
      }
    }
    for (ServiceModelEntry sm : index.serviceModels().values()) {
      CatalogWeightFile file = sm.weightFile().map(w -> new CatalogWeightFile(w.relativePath(), w.sha256(), size(w.path())))
          .orElse(null);
      ServiceModel record = ServiceModel.newBuilder().setName(sm.name()).setBaseModel(sm.baseModel())
          .setWeightFile(file).setInstances(1).setService(null).setLatencyObjectiveMs(null).setMinAccuracy(null)
          .setMemoryCapBytes(null).build();
      out.add(services.record(sm.name(), record));
    }
    return out;
  }

  /**
   * Produces the catalog of a repository and waits until the broker acknowledged every record.
   *
   * @return how many records were published
   */
  public static int publish(Producer<String, byte[]> producer, RepositoryIndex index, Topics topics, Codecs codecs) {
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    for (ProducerRecord<String, byte[]> record : records(index, topics, codecs)) {
      sent.add(producer.send(record));
    }
    producer.flush();
    try {
      for (Future<RecordMetadata> f : sent) {
        f.get(30, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing the catalog", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot publish the catalog to " + topics.catalogModels() + " / "
          + topics.catalogServices() + ": " + e.getMessage(), e);
    }
    return sent.size();
  }

  private static long size(java.nio.file.Path path) {
    try {
      return Files.size(path);
    } catch (IOException e) {
      throw new UncheckedIOException("weight file " + path + " cannot be read", e);
    }
  }
}

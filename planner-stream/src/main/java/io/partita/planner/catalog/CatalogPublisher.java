package io.partita.planner.catalog;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.catalog.CatalogSignatures;
import io.partita.common.config.ConfigException;
import io.partita.common.serde.Codecs;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.ServiceRequirements;
import io.partita.models.repo.VersionEntry;
import io.partita.planner.plan.Keys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
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
 * service model on {@code <prefix>.catalog.services} (key name; the instances and the requirements
 * on the version, objective included, that its manifest entry declares; no service grouping: the
 * manifests do not declare one). Both topics are
 * compacted, so publishing the same repository again only adds duplicates that compaction removes;
 * the planner compares plan bytes, so it plans nothing new. Entries that left the repository are
 * not deleted (publish a tombstone for their key to remove them).
 *
 * <p>Each record names its file (a version's {@code model.onnx}, a service model's weight file) by
 * its path relative to the repository root, or, with a base URI ({@value #BASE_URI_KEY}), by that
 * base URI followed by the relative path ({@code http://models:8000/demo-mlp/1/model.onnx}), so a
 * worker without the repository directory fetches it from wherever the repository is served (any
 * static web server) and checks its sha256 before loading it.
 */
public final class CatalogPublisher {
  /** The setting naming the base URI that catalog file URIs are published under; absent = repository paths. */
  public static final String BASE_URI_KEY = "catalog.base-uri";

  private CatalogPublisher() {}

  /**
   * The base URI of {@value #BASE_URI_KEY} as given ({@code http:}, {@code https:} or {@code file:},
   * a trailing {@code /} dropped), or empty when it is absent or blank.
   *
   * @throws io.partita.common.config.ConfigException naming the setting when it is not such a URI
   */
  public static Optional<String> baseUri(String value) {
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    String v = value.strip();
    URI uri;
    try {
      uri = new URI(v);
    } catch (URISyntaxException e) {
      throw new ConfigException(BASE_URI_KEY + "=" + value + ": not a URI (" + e.getReason()
          + "); give where the repository is served, e.g. http://models:8000 or file:///srv/models");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") && !scheme.equals("file")) {
      throw new ConfigException(BASE_URI_KEY + "=" + value + ": the scheme must be http, https"
          + " or file; give where the repository is served, e.g. http://models:8000 or file:///srv/models");
    }
    if (uri.getQuery() != null || uri.getFragment() != null) {
      throw new ConfigException(BASE_URI_KEY + "=" + value
          + ": a query or fragment cannot be followed by a file path; give the served directory only");
    }
    while (v.endsWith("/")) {
      v = v.substring(0, v.length() - 1);
    }
    return Optional.of(v);
  }

  /** A file's URI in the catalog: the repository-relative path, or it under the base URI, each segment percent-encoded. */
  public static String uri(String relativePath, Optional<String> baseUri) {
    if (baseUri.isEmpty()) {
      return relativePath;
    }
    StringBuilder out = new StringBuilder(baseUri.get());
    for (String segment : relativePath.replace('\\', '/').split("/")) {
      if (!segment.isEmpty()) {
        out.append('/').append(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
      }
    }
    return out.toString();
  }

  /** The catalog records of a repository, models first (timing events are checked against them); files by repository path. */
  public static List<ProducerRecord<String, byte[]>> records(RepositoryIndex index, Topics topics, Codecs codecs) {
    return records(index, topics, codecs, Optional.empty());
  }

  /**
   * The catalog records of a repository, models first (timing events are checked against them).
   *
   * @param baseUri when present, files are named by it followed by their repository path ({@link #baseUri(String)})
   */
  public static List<ProducerRecord<String, byte[]>> records(RepositoryIndex index, Topics topics, Codecs codecs,
      Optional<String> baseUri) {
    Topic<ModelVersion> versions = topics.catalogModels(codecs);
    Topic<ServiceModel> services = topics.catalogServices(codecs);
    List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
    for (ModelEntry model : index.models().values()) {
      for (VersionEntry v : model.versions().values()) {
        ModelVersion record = ModelVersion.newBuilder().setModel(v.model()).setVersion(v.version())
            .setUri(uri(v.relativePath(), baseUri)).setSha256(v.sha256()).setPrecision(v.precision().text())
            .setProviders(v.providers())
            .setAccuracy(v.accuracy().isPresent() ? v.accuracy().getAsDouble() : null)
            .setMemoryBytes(v.memoryBytes().isPresent() ? v.memoryBytes().getAsLong() : null)
            .setInputs(CatalogSignatures.toCatalog(v.signature().inputs()))
            .setOutputs(CatalogSignatures.toCatalog(v.signature().outputs())).build();
        out.add(versions.record(Keys.modelVersion(v.model(), v.version()), record));
      }
    }
    for (ServiceModelEntry sm : index.serviceModels().values()) {
      CatalogWeightFile file = sm.weightFile().map(w -> new CatalogWeightFile(uri(w.relativePath(), baseUri), w.sha256(), size(w.path())))
          .orElse(null);
      ServiceRequirements req = sm.requirements();
      ServiceModel record = ServiceModel.newBuilder().setName(sm.name()).setBaseModel(sm.baseModel())
          .setWeightFile(file).setInstances(sm.instances()).setService(null)
          .setLatencyObjectiveMs(req.latencyObjectiveMs().isPresent() ? req.latencyObjectiveMs().getAsDouble() : null)
          .setMinAccuracy(req.minAccuracy().isPresent() ? req.minAccuracy().getAsDouble() : null)
          .setMemoryCapBytes(req.memoryCapBytes().isPresent() ? req.memoryCapBytes().getAsLong() : null)
          .setVersionObjective(req.objective()).build();
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
    return publish(producer, index, topics, codecs, Optional.empty());
  }

  /**
   * Produces the catalog of a repository, files named under {@code baseUri} when present, and waits
   * until the broker acknowledged every record.
   *
   * @return how many records were published
   */
  public static int publish(Producer<String, byte[]> producer, RepositoryIndex index, Topics topics, Codecs codecs,
      Optional<String> baseUri) {
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    for (ProducerRecord<String, byte[]> record : records(index, topics, codecs, baseUri)) {
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

  private static long size(Path path) {
    try {
      return Files.size(path);
    } catch (IOException e) {
      throw new UncheckedIOException("weight file " + path + " cannot be read", e);
    }
  }
}

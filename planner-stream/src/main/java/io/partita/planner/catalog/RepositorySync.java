package io.partita.planner.catalog;

import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryException;
import io.partita.models.repo.RepositoryIndex;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the catalog topics equal to a model repository on disk: each {@link #sync()} scans the
 * repository and publishes only what changed since the last sync, a record for every version or
 * service model that is new or whose record differs, and a tombstone for every key that left the
 * repository, so a model copied into (or deleted from) the repository of a running
 * {@code partita local} is planned (or dropped) without a restart. Run it on a timer
 * ({@code catalog.rescan.interval.ms}).
 *
 * <p>What it guarantees: the first sync publishes the whole repository (as
 * {@link CatalogPublisher#publish} does) and returns only once the broker acknowledged it; a scan
 * that fails (a model copied half-way, a manifest with an error) publishes nothing, keeps the
 * catalog as it was and logs the reason once until it changes, so a model is never withdrawn
 * because its directory was being written. What it does not do: remove keys published by an
 * earlier process (it knows only what it published itself; a restart publishes the repository
 * again and earlier extra keys stay, as with {@link CatalogPublisher}).
 *
 * <p>One thread calls {@link #sync()} at a time.
 */
public final class RepositorySync {
  private static final Logger log = LoggerFactory.getLogger(RepositorySync.class);

  private final Producer<String, byte[]> producer;
  private final Path root;
  private final Topics topics;
  private final Codecs codecs;
  private final Optional<String> baseUri;
  /** What this process published, by topic and key. */
  private final Map<TopicKey, byte[]> published = new LinkedHashMap<>();
  private String lastProblem;

  record TopicKey(String topic, String key) {}

  public RepositorySync(Producer<String, byte[]> producer, Path root, Topics topics, Codecs codecs) {
    this(producer, root, topics, codecs, Optional.empty());
  }

  /** @param baseUri files are published under this base URI ({@link CatalogPublisher#baseUri(String)}); empty = repository paths */
  public RepositorySync(Producer<String, byte[]> producer, Path root, Topics topics, Codecs codecs, Optional<String> baseUri) {
    this.baseUri = baseUri;
    this.producer = producer;
    this.root = root;
    this.topics = topics;
    this.codecs = codecs;
  }

  /**
   * Scans the repository and publishes the changes since the last sync.
   *
   * @return how many records (values and tombstones) were published; 0 when nothing changed or the
   *     scan failed
   * @throws IllegalStateException when the broker did not acknowledge a record (the next sync sends it again)
   */
  public int sync() {
    RepositoryIndex index;
    try {
      index = ModelRepository.scan(root);
    } catch (RepositoryException e) {
      if (!e.getMessage().equals(lastProblem)) {
        log.warn("The catalog of {} is left as it was: the repository cannot be scanned now ({}); it is scanned again shortly",
            root, e.getMessage());
        lastProblem = e.getMessage();
      }
      return 0;
    }
    lastProblem = null;
    List<ProducerRecord<String, byte[]>> changes = changes(published, CatalogPublisher.records(index, topics, codecs, baseUri));
    if (changes.isEmpty()) {
      log.debug("Rescanned {}: the catalog is unchanged", root);
      return 0;
    }
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    for (ProducerRecord<String, byte[]> record : changes) {
      sent.add(producer.send(record));
    }
    producer.flush();
    try {
      for (Future<RecordMetadata> f : sent) {
        f.get(30, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing the catalog of " + root, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot publish the catalog of " + root + " to " + topics.catalogModels() + " / "
          + topics.catalogServices() + ": " + e.getMessage(), e);
    }
    for (ProducerRecord<String, byte[]> record : changes) {
      TopicKey key = new TopicKey(record.topic(), record.key());
      if (record.value() == null) {
        published.remove(key);
      } else {
        published.put(key, record.value());
      }
    }
    if (changes.stream().anyMatch(r -> r.value() == null)) {
      log.info("Catalog of {} updated: {} record(s), withdrawn {}", root, changes.size(),
          changes.stream().filter(r -> r.value() == null).map(ProducerRecord::key).toList());
    } else {
      log.info("Catalog of {} updated: {} record(s) for {}", root, changes.size(), changes.stream().map(ProducerRecord::key).toList());
    }
    return changes.size();
  }

  /**
   * The records that turn {@code before} into {@code now}: those of {@code now} whose bytes differ
   * (or are new), in their order, then a tombstone for each key of {@code before} that {@code now}
   * lacks. Pure.
   */
  static List<ProducerRecord<String, byte[]>> changes(Map<TopicKey, byte[]> before, List<ProducerRecord<String, byte[]>> now) {
    List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
    Map<TopicKey, byte[]> gone = new LinkedHashMap<>(before);
    for (ProducerRecord<String, byte[]> record : now) {
      TopicKey key = new TopicKey(record.topic(), record.key());
      byte[] was = gone.remove(key);
      if (was == null || !Arrays.equals(was, record.value())) {
        out.add(record);
      }
    }
    // in the reverse of publishing order: service models before the versions they were published after
    List<TopicKey> withdrawn = new ArrayList<>(gone.keySet());
    Collections.reverse(withdrawn);
    withdrawn.forEach(k -> out.add(new ProducerRecord<>(k.topic(), k.key(), null)));
    return out;
  }
}

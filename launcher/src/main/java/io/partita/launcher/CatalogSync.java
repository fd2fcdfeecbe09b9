package io.partita.launcher;

import io.partita.common.Service;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.PlannerConfig;
import io.partita.planner.catalog.RepositorySync;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The catalog of a local model repository, published at start and kept in step with the directory
 * while {@code partita local} runs ({@link RepositorySync} every {@code catalog.rescan.interval.ms},
 * default 2000; 0 publishes once). {@link #start()} returns once the first publish is acknowledged.
 * A sync that fails is logged and tried again at the next tick; it never stops the timer.
 */
final class CatalogSync implements Service {
  private static final Logger log = LoggerFactory.getLogger(CatalogSync.class);

  static final String INTERVAL_KEY = "catalog.rescan.interval.ms";
  static final long DEFAULT_INTERVAL_MS = 2000;

  private final PlannerConfig config;
  private final Path repo;
  private final long intervalMs;
  private final Optional<String> baseUri;
  private KafkaProducer<String, byte[]> producer;
  private ScheduledExecutorService timer;
  private int firstPublished;

  CatalogSync(PlannerConfig config, Path repo, long intervalMs) {
    this(config, repo, intervalMs, Optional.empty());
  }

  /** @param baseUri files are published as baseUri/path (catalog.base-uri); empty = repository paths */
  CatalogSync(PlannerConfig config, Path repo, long intervalMs, Optional<String> baseUri) {
    this.baseUri = baseUri;
    this.config = config;
    this.repo = repo;
    this.intervalMs = intervalMs;
  }

  @Override
  public void start() {
    Properties p = new Properties();
    p.putAll(config.kafka().clients());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    // Not idempotent: on a broker that has just started, the first append to the catalog topics,
    // made a moment before, can be answered NOT_LEADER_OR_FOLLOWER although it was written; the
    // idempotent producer's retry is then refused as out of sequence, again and again, until the
    // batch expires (120 s), and partita local stopped before it was ready. Catalog records are
    // keyed upserts on compacted topics: a duplicate is harmless, and one request in flight keeps
    // their order.
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    producer = new KafkaProducer<>(p);
    RepositorySync sync = new RepositorySync(producer, repo, config.topics(), config.codecs(), baseUri);
    // at start the repository must scan: a broken one is an error to fix, not something to wait out
    ModelRepository.scan(repo);
    firstPublished = sync.sync();
    if (intervalMs > 0) {
      timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "partita-catalog-sync");
        t.setDaemon(true);
        return t;
      });
      timer.scheduleWithFixedDelay(() -> {
        try {
          sync.sync();
        } catch (Throwable e) { // a task that throws is never run again: log and try at the next tick
          log.warn("Publishing the catalog of {} failed (tried again in {} ms): {}", repo, intervalMs, e.toString());
        }
      }, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }
  }

  /** How many records the first sync published. */
  int firstPublished() {
    return firstPublished;
  }

  long intervalMs() {
    return intervalMs;
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
      try {
        timer.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      timer = null;
    }
    if (producer != null) {
      producer.close();
      producer = null;
    }
  }
}

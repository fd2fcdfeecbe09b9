package io.partita.worker.kafka;

import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topics;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.TopicFollower;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the catalog once, for a worker without a model repository: the compacted
 * {@code <prefix>.catalog.models} and {@code <prefix>.catalog.services} are read from the beginning
 * to the end they had when reading started ({@link TopicFollower#readToEnd}: assigned, no consumer
 * group); the latest value of each key wins and a tombstone removes it. A record that cannot be
 * decoded is passed over (warned about in a summary; the previous value of its key stays), one
 * without a key is ignored. The worker reads it at start and again when the plan places a model it
 * does not know.
 *
 * @param versions latest version records by key (model/version)
 * @param services latest service model records by name
 */
public record CatalogSnapshot(Map<String, ModelVersion> versions, Map<String, ServiceModel> services) {
  private static final Logger log = LoggerFactory.getLogger(CatalogSnapshot.class);

  public CatalogSnapshot {
    versions = Map.copyOf(versions);
    services = Map.copyOf(services);
  }

  /**
   * @param consumer a consumer of String keys and byte[] values; closed here
   * @param timeout how long reading to the end may take
   * @throws IllegalStateException naming the topics when the end is not reached in time
   */
  public static CatalogSnapshot read(Consumer<String, byte[]> consumer, Topics topics, Codecs codecs, Duration timeout) {
    RecordCodec<ModelVersion> versionCodec = codecs.codec(ModelVersion.class);
    RecordCodec<ServiceModel> serviceCodec = codecs.codec(ServiceModel.class);
    Map<String, ModelVersion> versions = new TreeMap<>();
    Map<String, ServiceModel> services = new TreeMap<>();
    TopicFollower.Reader reader = r -> {
      if (r.key() == null) {
        return;
      }
      if (r.topic().equals(topics.catalogModels())) {
        put(versions, r.key(), r.value() == null ? null : versionCodec.decode(r.topic(), r.value()));
      } else {
        put(services, r.key(), r.value() == null ? null : serviceCodec.decode(r.topic(), r.value()));
      }
    };
    TopicFollower.Settings settings = TopicFollower.Settings
        .fromBeginning("a catalog record", topics.catalogModels(), topics.catalogServices())
        .withPoll(Duration.ofMillis(200)).withFaults(TopicFollower.Faults.STOP).withPartitionWait(timeout);
    boolean read;
    try {
      read = new TopicFollower(consumer, settings, LoopGuard.unregistered("worker-catalog", log), reader).readToEnd(timeout);
    } catch (UnknownTopicOrPartitionException e) {
      throw new IllegalStateException("catalog " + e.getMessage() + "; is topic.prefix the one the catalog was published under?", e);
    }
    if (!read) {
      throw new IllegalStateException("the catalog (" + topics.catalogModels() + ", " + topics.catalogServices()
          + ") was not read to its end within " + timeout.toSeconds() + " s");
    }
    return new CatalogSnapshot(versions, services);
  }

  private static <T> void put(Map<String, T> map, String key, T value) {
    if (value == null) {
      map.remove(key);
    } else {
      map.put(key, value);
    }
  }
}

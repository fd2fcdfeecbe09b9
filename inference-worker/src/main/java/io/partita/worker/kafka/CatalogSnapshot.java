package io.partita.worker.kafka;

import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the catalog once, for a worker without a model repository: the compacted
 * {@code <prefix>.catalog.models} and {@code <prefix>.catalog.services} are assigned (no consumer
 * group) and read from the beginning to the end they had when reading started; the latest value of
 * each key wins and a tombstone removes it. A record that cannot be decoded is logged and passed
 * over (the previous value of its key stays). The worker reads it at start and again when the plan
 * places a model it does not know.
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
    long giveUp = System.nanoTime() + timeout.toNanos();
    try (consumer) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (String topic : List.of(topics.catalogModels(), topics.catalogServices())) {
        List<TopicPartition> found = List.of();
        while (found.isEmpty()) { // a topic created a moment ago may not be in the metadata yet
          found = consumer.partitionsFor(topic, Duration.ofSeconds(5)).stream()
              .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
          if (found.isEmpty() && System.nanoTime() > giveUp) {
            throw new IllegalStateException("catalog topic " + topic + " has no partitions after " + timeout.toSeconds()
                + " s; is topic.prefix the one the catalog was published under?");
          }
        }
        partitions.addAll(found);
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      while (!end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
        if (System.nanoTime() > giveUp) {
          throw new IllegalStateException("the catalog (" + topics.catalogModels() + ", " + topics.catalogServices()
              + ") was not read to its end within " + timeout.toSeconds() + " s");
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.key() == null) {
            continue;
          }
          boolean models = r.topic().equals(topics.catalogModels());
          try {
            if (models) {
              put(versions, r.key(), r.value() == null ? null : versionCodec.decode(r.topic(), r.value()));
            } else {
              put(services, r.key(), r.value() == null ? null : serviceCodec.decode(r.topic(), r.value()));
            }
          } catch (RuntimeException e) {
            log.warn("Catalog record {}-{}@{} (key {}) passed over: {}", r.topic(), r.partition(), r.offset(), r.key(), e.toString());
          }
        }
      }
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

package io.partita.gateway.catalog;

import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topic;
import io.partita.gateway.health.LoopGuard;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the catalog for a gateway without a model repository: the compacted
 * {@code <prefix>.catalog.models} and {@code <prefix>.catalog.services} are assigned (no consumer
 * group) and read from the beginning into a {@link CatalogView}, rebuilt once per poll that brought
 * records, so a model published or withdrawn while the gateway runs is offered or refused from the
 * next call on. A record that cannot be decoded (or that throws anything) is counted, summarised in
 * the log and passed over; the previous value of its key stays. A failing poll makes the loop
 * NOT_READY while it lasts; its state is in its {@link LoopGuard}.
 */
public final class CatalogReader implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CatalogReader.class);

  private final Consumer<String, byte[]> consumer;
  private final String modelsTopic;
  private final String servicesTopic;
  private final Topic<ModelVersion> versions;
  private final Topic<ServiceModel> services;
  private final CatalogView view;
  private final LoopGuard guard;
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  private volatile boolean running = true;

  public CatalogReader(Consumer<String, byte[]> consumer, Topic<ModelVersion> versions, Topic<ServiceModel> services,
      CatalogView view, LoopGuard guard) {
    this.consumer = consumer;
    this.modelsTopic = versions.name();
    this.servicesTopic = services.name();
    this.versions = versions;
    this.services = services;
    this.view = view;
    this.guard = guard;
  }

  /** Completes once both topics have been read up to the end they had when reading started. */
  public CompletableFuture<Void> caughtUp() {
    return caughtUp;
  }

  @Override
  public void run() {
    boolean died = false;
    try {
      List<TopicPartition> partitions = new ArrayList<>();
      long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      for (String topic : List.of(modelsTopic, servicesTopic)) {
        List<TopicPartition> found = List.of();
        // A topic created a moment ago may not be in the metadata yet: ask again until it is.
        while (found.isEmpty() && running) {
          found = consumer.partitionsFor(topic, Duration.ofSeconds(5)).stream()
              .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
          if (found.isEmpty() && System.nanoTime() > giveUp) {
            throw new IllegalStateException("catalog topic " + topic + " has no partitions after 30 s");
          }
        }
        partitions.addAll(found);
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      guard.notReady("reading " + modelsTopic + " and " + servicesTopic + " up to their ends");
      while (running) {
        ConsumerRecords<String, byte[]> records;
        try {
          records = consumer.poll(Duration.ofMillis(100));
        } catch (RecordDeserializationException e) {
          guard.skipped("a catalog record", e.topicPartition().topic(), e.topicPartition().partition(), e.offset(), e);
          consumer.seek(e.topicPartition(), e.offset() + 1);
          continue;
        } catch (KafkaException e) {
          if (!running) {
            break;
          }
          guard.faulted("reading the catalog", e);
          if (!guard.backOff()) {
            running = false;
          }
          continue;
        }
        for (ConsumerRecord<String, byte[]> record : records) {
          try {
            apply(record);
          } catch (Throwable e) {
            guard.skipped("a catalog record", record.topic(), record.partition(), record.offset(), e);
          }
        }
        if (!records.isEmpty() && view.rebuild() && caughtUp.isDone()) {
          log.info("Catalog changed: now offering {}", view.current().serviceModels().keySet());
        }
        if (!caughtUp.isDone() && end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
          view.rebuild();
          log.info("Catalog caught up: {} model(s), service models {} from {} and {}", view.current().models().size(),
              view.current().serviceModels().keySet(), modelsTopic, servicesTopic);
          caughtUp.complete(null);
        }
        if (caughtUp.isDone()) {
          guard.ready();
        }
        guard.flush();
      }
    } catch (Throwable e) {
      caughtUp.completeExceptionally(e);
      if (running) {
        died = true;
        guard.died(e);
      }
    } finally {
      if (!died) {
        guard.stopped();
      }
      consumer.close(Duration.ofSeconds(2));
    }
  }

  /** Applies one record to the view; throws when it cannot (the caller passes it over). */
  private void apply(ConsumerRecord<String, byte[]> record) {
    if (record.key() == null) {
      throw new IllegalArgumentException("a catalog record without a key");
    }
    boolean models = record.topic().equals(modelsTopic);
    if (record.value() == null) {
      if (models) {
        view.putVersion(record.key(), null);
      } else {
        view.putService(record.key(), null);
      }
      return;
    }
    if (models) {
      view.putVersion(record.key(), versions.decode(record.value()));
    } else {
      view.putService(record.key(), services.decode(record.value()));
    }
  }

  @Override
  public void close() {
    running = false;
  }
}

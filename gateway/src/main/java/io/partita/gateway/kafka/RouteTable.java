package io.partita.gateway.kafka;

import io.partita.avro.Route;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.schemas.DecodeException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The planner's routes, read in the background: the compacted {@code <prefix>.plan.routes} topic
 * is assigned (no consumer group) and read from the beginning; the latest value per key (service
 * model) wins and a tombstone removes the key. A record that cannot be decoded is logged and
 * skipped (the previous route of its key stays).
 */
public final class RouteTable implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RouteTable.class);

  private final Consumer<String, byte[]> consumer;
  private final String topic;
  private final RecordCodec<Route> codec;
  private final Map<String, Route> routes = new ConcurrentHashMap<>();
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  private volatile boolean running = true;
  private volatile boolean reading;

  public RouteTable(Consumer<String, byte[]> consumer, String topic, Codecs codecs) {
    this.consumer = consumer;
    this.topic = topic;
    this.codec = codecs.codec(Route.class);
  }

  /** The current route of a service model, or null when the planner has written none (or deleted it). */
  public Route route(String serviceModel) {
    return routes.get(serviceModel);
  }

  /** Every current route (a live view), for the fallback to the instances of a base model. */
  public java.util.Collection<Route> routes() {
    return java.util.Collections.unmodifiableCollection(routes.values());
  }

  /** Completes once the topic has been read up to the end it had when reading started. */
  public CompletableFuture<Void> caughtUp() {
    return caughtUp;
  }

  /** Whether the table has caught up once and is still being read. */
  public boolean reading() {
    return reading && caughtUp.isDone() && !caughtUp.isCompletedExceptionally();
  }

  @Override
  public void run() {
    try {
      List<TopicPartition> partitions = List.of();
      long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      // A topic created a moment ago may not be in the metadata yet: ask again until it is.
      while (partitions.isEmpty() && running) {
        partitions = consumer.partitionsFor(topic, Duration.ofSeconds(5)).stream()
            .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
        if (partitions.isEmpty() && System.nanoTime() > giveUp) {
          throw new IllegalStateException("route topic " + topic + " has no partitions after 30 s");
        }
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      reading = true;
      while (running) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
          apply(record);
        }
        if (!caughtUp.isDone() && end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
          log.info("Route table caught up: {} route(s) from {}", routes.size(), topic);
          caughtUp.complete(null);
        }
      }
    } catch (RuntimeException e) {
      caughtUp.completeExceptionally(e);
      if (running) {
        log.error("Route table stopped reading {}", topic, e);
      }
    } finally {
      reading = false;
      consumer.close(Duration.ofSeconds(2));
    }
  }

  private void apply(ConsumerRecord<String, byte[]> record) {
    if (record.key() == null) {
      log.warn("Skipping a record without a key on {} at partition {} offset {}", topic, record.partition(), record.offset());
      return;
    }
    if (record.value() == null) {
      routes.remove(record.key());
      return;
    }
    try {
      routes.put(record.key(), codec.decode(record.topic(), record.value()));
    } catch (DecodeException e) {
      log.warn("Skipping an undecodable route for '{}' on {} at partition {} offset {}: {}", record.key(), topic,
          record.partition(), record.offset(), e.getMessage());
    }
  }

  @Override
  public void close() {
    running = false;
  }
}

package io.partita.gateway.kafka;

import io.partita.avro.Route;
import io.partita.common.Topic;
import io.partita.gateway.health.LoopGuard;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The planner's routes, read in the background: the compacted {@code <prefix>.plan.routes} topic
 * is assigned (no consumer group) and read from the beginning; the latest value per key (service
 * model) wins and a tombstone removes the key. A record that cannot be decoded (or that throws
 * anything) is counted, summarised in the log and passed over; the previous route of its key stays.
 * A failing poll makes the loop NOT_READY while it lasts; its state is in its {@link LoopGuard}.
 */
public final class RouteTable implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RouteTable.class);

  private final Consumer<String, byte[]> consumer;
  private final String topic;
  private final Topic<Route> routesTopic;
  private final Map<String, Route> routes = new ConcurrentHashMap<>();
  private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
  private volatile boolean running = true;
  private volatile boolean reading;
  private final LoopGuard guard;

  public RouteTable(Consumer<String, byte[]> consumer, Topic<Route> routesTopic, LoopGuard guard) {
    this.guard = guard;
    this.consumer = consumer;
    this.topic = routesTopic.name();
    this.routesTopic = routesTopic;
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
    return reading && caughtUp.isDone() && !caughtUp.isCompletedExceptionally() && guard.loop().isReady();
  }

  @Override
  public void run() {
    boolean died = false;
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
      guard.notReady("reading " + topic + " up to its end");
      while (running) {
        ConsumerRecords<String, byte[]> records;
        try {
          records = consumer.poll(Duration.ofMillis(100));
        } catch (RecordDeserializationException e) {
          guard.skipped("a route record", e.topicPartition().topic(), e.topicPartition().partition(), e.offset(), e);
          consumer.seek(e.topicPartition(), e.offset() + 1);
          continue;
        } catch (KafkaException e) {
          if (!running) {
            break;
          }
          guard.faulted("reading " + topic, e);
          if (!guard.backOff()) {
            running = false;
          }
          continue;
        }
        for (ConsumerRecord<String, byte[]> record : records) {
          try {
            apply(record);
          } catch (Throwable e) {
            guard.skipped("a route record", record.topic(), record.partition(), record.offset(), e);
          }
        }
        if (!caughtUp.isDone() && end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
          log.info("Route table caught up: {} route(s) from {}", routes.size(), topic);
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
      reading = false;
      if (!died) {
        guard.stopped();
      }
      consumer.close(Duration.ofSeconds(2));
    }
  }

  /** Applies one record; throws when it cannot (the caller passes it over). */
  private void apply(ConsumerRecord<String, byte[]> record) {
    if (record.key() == null) {
      throw new IllegalArgumentException("a route record without a key");
    }
    if (record.value() == null) {
      routes.remove(record.key());
      return;
    }
    routes.put(record.key(), routesTopic.decode(record.value()));
  }

  @Override
  public void close() {
    running = false;
  }
}

package io.partita.gateway.kafka;

import io.partita.avro.Route;
import io.partita.common.Topic;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.TopicFollower;
import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The planner's routes, read in the background: the compacted {@code <prefix>.plan.routes} topic
 * is followed from its beginning ({@link TopicFollower}: assigned, no consumer group); the latest
 * value per key (service model) wins and a tombstone removes the key. A record that cannot be
 * decoded (or that throws anything) is counted, summarised in the log and passed over; the previous
 * route of its key stays. A failing poll makes the loop NOT_READY while it lasts; its state is in
 * its {@link LoopGuard}.
 */
public final class RouteTable implements Runnable, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RouteTable.class);

  private final Topic<Route> routesTopic;
  private final Map<String, Route> routes = new ConcurrentHashMap<>();
  private final LoopGuard guard;
  private final TopicFollower follower;

  public RouteTable(Consumer<String, byte[]> consumer, Topic<Route> routesTopic, LoopGuard guard) {
    this.guard = guard;
    this.routesTopic = routesTopic;
    this.follower = new TopicFollower(consumer, TopicFollower.Settings.fromBeginning("a route record", routesTopic.name()),
        guard, this::apply);
    follower.caughtUp().thenRun(() -> log.info("Route table caught up: {} route(s) from {}", routes.size(), routesTopic.name()));
  }

  /** The current route of a service model, or null when the planner has written none (or deleted it). */
  public Route route(String serviceModel) {
    return routes.get(serviceModel);
  }

  /** Every current route (a live view), for the fallback to the instances of a base model. */
  public Collection<Route> routes() {
    return Collections.unmodifiableCollection(routes.values());
  }

  /** Completes once the topic has been read up to the end it had when reading started. */
  public CompletableFuture<Void> caughtUp() {
    return follower.caughtUp();
  }

  /** Whether the table has caught up once and is still being read. */
  public boolean reading() {
    CompletableFuture<Void> caughtUp = follower.caughtUp();
    return follower.following() && caughtUp.isDone() && !caughtUp.isCompletedExceptionally() && guard.loop().isReady();
  }

  @Override
  public void run() {
    follower.run();
  }

  /** Applies one record; throws when it cannot (the follower passes it over). */
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
    follower.close();
  }
}

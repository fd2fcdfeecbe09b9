package io.partita.gateway.dashboard;

import io.micrometer.core.instrument.MeterRegistry;
import io.partita.common.Topics;
import io.partita.common.health.Loop;
import io.partita.common.health.Loops;
import io.partita.common.serde.Codecs;
import io.partita.gateway.auth.ApiKeys;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live dashboard's server side: one background topic reader ({@link TopicReader}, registered
 * as loop {@code dashboard-reader}), one push thread that samples the gateway's traffic and sends
 * changed views to open event streams, and the transport-free {@link DashboardApi}. It never writes
 * to Kafka, and a failure in it never stops the gateway from serving infer calls.
 */
public final class Dashboard implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Dashboard.class);

  /**
   * What the dashboard needs from the gateway.
   *
   * @param consumerProps Kafka consumer settings (bootstrap, security, deserializers of String keys and byte[] values)
   * @param serviceModels the service models the gateway offers
   * @param metrics the gateway's metrics registry (its {@code partita.gateway.requests} timer)
   * @param loops where the reader's loop is registered
   */
  public record Context(DashboardConfig settings, Topics topics, Codecs codecs, Properties consumerProps,
      ApiKeys keys, Set<String> serviceModels, MeterRegistry metrics, Loops loops) {}

  private final DashboardState state;
  private final TopicReader reader;
  private final Thread readerThread;
  private final Traffic traffic;
  private final DashboardApi api;
  private final ScheduledExecutorService pusher;
  private final Set<String> serviceModels;
  private long lastChanges = -1; // push thread only

  private Dashboard(Context c) {
    DashboardConfig s = c.settings();
    this.serviceModels = Set.copyOf(c.serviceModels());
    this.state = new DashboardState(c.topics(), c.codecs(), s.deadLetters());
    Properties props = new Properties();
    props.putAll(c.consumerProps());
    props.remove(ConsumerConfig.GROUP_ID_CONFIG);
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // the planner writes in transactions
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
    props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200"); // a page refreshes once a second: no need to spin
    Loop loop = c.loops().register("dashboard-reader");
    this.reader = new TopicReader(new KafkaConsumer<>(props), state,
        Map.of(c.topics().profileTimings(), s.timings(), c.topics().deadLetter(), s.deadLetters()), loop);
    this.readerThread = new Thread(reader, "partita-dashboard-reader");
    readerThread.setDaemon(true);
    this.traffic = new Traffic(c.metrics(), s.windowSeconds(), s.historySeconds());
    Views views = new Views(state, traffic, c.serviceModels(), s, System::currentTimeMillis);
    this.api = new DashboardApi(views, c.keys(), c.serviceModels(), loop,
        WhatIf.find(c.consumerProps(), c.topics(), c.codecs()), c.topics(), c.codecs());
    this.pusher = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "partita-dashboard-push");
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts reading and pushing. */
  public static Dashboard start(Context c) {
    Dashboard d = new Dashboard(c);
    d.readerThread.start();
    long every = c.settings().pushIntervalMs();
    d.pusher.scheduleWithFixedDelay(d::tick, 0, every, TimeUnit.MILLISECONDS);
    return d;
  }

  private void tick() {
    try {
      long now = System.currentTimeMillis();
      traffic.sample(serviceModels, now);
      long changes = state.changes();
      api.push(now, changes != lastChanges);
      lastChanges = changes;
    } catch (RuntimeException e) {
      log.warn("Dashboard push failed; trying again at the next tick", e);
    }
  }

  public DashboardApi api() {
    return api;
  }

  @Override
  public void close() {
    pusher.shutdownNow();
    reader.close();
    try {
      readerThread.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** For tests: the reader's state. */
  DashboardState state() {
    return state;
  }

  /** How many event streams are open. */
  public int streams() {
    return api.subscribers();
  }

}

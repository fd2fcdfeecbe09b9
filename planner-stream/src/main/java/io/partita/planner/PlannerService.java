package io.partita.planner;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.common.Service;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.lifecycle.Closer;
import io.partita.common.metrics.MetricsEndpoint;
import io.partita.planner.metrics.PlannerMetrics;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The live planner: creates the topics it needs when they are missing, then runs
 * {@link PlannerTopology} in Kafka Streams (exactly_once_v2). {@link #start} returns once the
 * application is RUNNING, so its state has been restored from the changelogs; a fatal stream error
 * stops it loudly (its state goes to ERROR and the uncaught exception is logged), never silently.
 */
public final class PlannerService implements Service {
  private static final Logger log = LoggerFactory.getLogger(PlannerService.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  private final PlannerConfig config;
  private final AtomicLong restored = new AtomicLong();
  /** What {@link #start} started, closed in reverse order by {@link #close}. */
  private final Closer resources = new Closer("planner");
  private KafkaStreams streams;
  private Admin growerAdmin;
  private RequestTopicGrower grower;
  private Admin watcherAdmin;
  private KafkaProducer<String, byte[]> watcherProducer;
  private HostWatcher watcher;
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final PlannerMetrics metrics = new PlannerMetrics(registry);
  private MetricsEndpoint endpoint;

  /** The planner's metrics ({@link io.partita.planner.metrics.PlannerMetrics}), also served on {@code /metrics} when {@code planner.metrics.port} is set. */
  public MeterRegistry registry() {
    return registry;
  }

  public PlannerService(PlannerConfig config) {
    this.config = config;
  }

  @Override
  public void start() throws Exception {
    try {
      startAll();
    } catch (Exception | Error e) {
      resources.closeAfter(e);
      throw e;
    }
  }

  private void startAll() throws Exception {
    // The admin client needs the same security settings as the Streams clients (kafka.*).
    Properties adminProps = config.kafka().base();
    try (Admin admin = Admin.create(adminProps)) {
      TopicAdmin.ensure(admin, config.topics().infrastructure(), config.topicReplication());
    }
    streams = new KafkaStreams(PlannerTopology.build(config.plan(), config.kafka().codecs(), config.debounce(), metrics), config.streamsProperties());
    // Leave the group on a deliberate stop: otherwise the next start (or a standby) waits out the
    // old member's session timeout, about 45 s, before the planner's tasks are assigned again.
    resources.register("streams", () -> streams.close(CloseOptions.timeout(Duration.ofSeconds(30))
        .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)));
    CountDownLatch running = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      if (now == KafkaStreams.State.RUNNING || now == KafkaStreams.State.ERROR
          || now == KafkaStreams.State.NOT_RUNNING) {
        running.countDown();
      }
    });
    streams.setGlobalStateRestoreListener(new StateRestoreListener() {
      @Override
      public void onRestoreStart(TopicPartition partition, String store, long start, long end) {}

      @Override
      public void onBatchRestored(TopicPartition partition, String store, long batchEnd, long count) {
        restored.addAndGet(count);
      }

      @Override
      public void onRestoreEnd(TopicPartition partition, String store, long total) {
        log.info("Restored {} records of {} from {}", total, store, partition);
      }
    });
    streams.setUncaughtExceptionHandler(e -> {
      log.error("Planner stream failed; stopping it", e);
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    streams.start();
    if (!running.await(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || streams.state() != KafkaStreams.State.RUNNING) {
      KafkaStreams.State state = streams.state();
      throw new IllegalStateException("planner did not reach RUNNING within " + START_TIMEOUT.toSeconds()
          + " s (state " + state + "); check kafka.bootstrap.servers=" + config.kafka().bootstrapServers()
          + " and planner.application.id=" + config.streams().applicationId());
    }
    startGrower(adminProps);
    if (config.hostWatchMs() > 0) {
      watcherAdmin = Admin.create(adminProps);
      resources.register("host watcher's admin client", () -> watcherAdmin.close(Duration.ofSeconds(5)));
      watcherProducer = new KafkaProducer<>(config.kafka().producer());
      resources.register("host watcher's producer", () -> watcherProducer.close(Duration.ofSeconds(5)));
      watcher = new HostWatcher(watcherAdmin, watcherProducer, config.topics(), config.kafka().codecs(), config.hostWatchMs());
      watcher.start();
      resources.register("host watcher", watcher);
    }
    if (config.metricsPort() > 0) {
      endpoint = resources.register("metrics endpoint", new MetricsEndpoint(registry, config.metricsPort()));
      log.info("Planner metrics on http://0.0.0.0:{}/metrics", endpoint.port());
    }
    log.info("Planner {} running on {} (topics {}.*)", config.streams().applicationId(), config.kafka().bootstrapServers(),
        config.kafka().topicPrefix());
  }

  /** Grows each base model's request topic with the slots the plan gives it ({@link RequestTopicGrower}). */
  private void startGrower(Properties adminProps) {
    Properties consumer = new Properties();
    consumer.putAll(adminProps);
    consumer.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
        StringDeserializer.class.getName());
    consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
        ByteArrayDeserializer.class.getName());
    growerAdmin = Admin.create(adminProps);
    resources.register("grower's admin client", () -> growerAdmin.close(Duration.ofSeconds(5)));
    grower = new RequestTopicGrower(new KafkaConsumer<>(consumer), growerAdmin, config.topics(),
        config.kafka().codecs(), config.requestPartitions(), config.topicReplication());
    grower.start();
    resources.register("request topic grower", grower);
  }

  /** Records restored from changelogs since start (0 when the local state was already current). */
  public long restoredRecords() {
    return restored.get();
  }

  public KafkaStreams.State state() {
    return streams == null ? KafkaStreams.State.CREATED : streams.state();
  }

  /** Approximate entries of one of the topology's stores (see {@link PlannerTopology}). */
  public long storeEntries(String store) {
    ReadOnlyKeyValueStore<String, byte[]> kv =
        streams.store(StoreQueryParameters.fromNameAndType(store, QueryableStoreTypes.<String, byte[]>keyValueStore()));
    return kv.approximateNumEntries();
  }

  /** Stops the metrics endpoint, the host watcher and the grower, then the streams, which leave the group. Safe to call twice. */
  @Override
  public void close() {
    resources.close();
  }
}

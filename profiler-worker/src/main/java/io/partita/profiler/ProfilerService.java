package io.partita.profiler;

import ai.onnxruntime.OrtEnvironment;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.common.Service;
import io.partita.common.Topics;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.lifecycle.Closer;
import io.partita.common.metrics.MetricsEndpoint;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.idle.IdleGate;
import io.partita.profiler.idle.IdleGatedSink;
import io.partita.profiler.idle.IdleWait;
import io.partita.profiler.idle.SlotLoad;
import io.partita.profiler.idle.MeasuringCondition;
import io.partita.profiler.kafka.AvroMapper;
import io.partita.profiler.kafka.EventPublisher;
import io.partita.profiler.kafka.RequestLoop;
import io.partita.profiler.kafka.SlotStatusFollower;
import io.partita.profiler.measure.BaselineBenchmark;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ProgressListener;
import io.partita.profiler.metrics.MeteredSink;
import io.partita.profiler.metrics.ProfilerMetrics;
import io.partita.profiler.run.ProfileOutcome;
import io.partita.profiler.run.ProfileRunner;
import io.partita.profiler.run.ProfileSink;
import io.partita.profiler.run.ProfileSpec;
import io.partita.profiler.run.RepositoryModels;
import io.partita.profiler.stats.Sampler;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The profiler on one host, on Kafka.
 *
 * <p>At start it probes the host, runs the baseline benchmark (when {@code profiler.baseline} is
 * on) and publishes the {@code HostEnvironment} to {@code <prefix>.hosts.environments} (key = host
 * id); every {@code profiler.reprobe.ms} it probes again and republishes, baseline rerun, only when
 * the host changed ({@link ProbedHost#sameHostAs}). It consumes
 * {@code <prefix>.profile.requests} in the group {@code <prefix>.profiler.<host>}, so every host
 * sees every request, and measures those for this host or {@code *}: one {@code TimingEvent} per
 * point and per grouping to {@code <prefix>.profile.timings}, progress to
 * {@code <prefix>.profile.status}. See {@link RequestLoop} for failures and offsets.
 *
 * <p>All measuring (baseline, requests, {@link #profileNow}) runs on one thread, one job after
 * another, because points must not share the cores with each other.
 */
public final class ProfilerService implements Service {
  private static final Logger log = LoggerFactory.getLogger(ProfilerService.class);

  /** Probes this host; a test may pass its own. */
  @FunctionalInterface
  public interface EnvironmentProbe {
    ProbedHost probe();
  }

  private final ProfilerConfig config;
  private final Topics topics;
  private final EnvironmentProbe probe;
  private final OrtEnvironment ort = OrtEnvironment.getEnvironment();
  private final Measurer.Settings measurerSettings;
  private RepositoryModels models;
  private KafkaProducer<String, byte[]> producer;
  private EventPublisher measuringPublisher;
  private ExecutorService measuring;
  private ScheduledExecutorService reprobing;
  private RequestLoop loop;
  private Thread loopThread;
  private volatile ProbedHost published;
  private volatile boolean closed;
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final ProfilerMetrics metrics = new ProfilerMetrics(registry);
  private MetricsEndpoint endpoint;
  /** What {@link #start} (and {@link #watchSlots}) started, closed in reverse order by {@link #close}. */
  private final Closer resources = new Closer("profiler");
  private IdleGate gate;
  private ScheduledExecutorService localSlots;
  private SlotStatusFollower follower;
  private Thread followerThread;

  public ProfilerService(ProfilerConfig config) {
    this(config, () -> HostProbe.live().probe(config.hostId(), ProviderProbe.probe(OrtEnvironment.getEnvironment())));
  }

  public ProfilerService(ProfilerConfig config, EnvironmentProbe probe) {
    this.config = config;
    this.topics = config.kafka().topics();
    this.probe = probe;
    this.measurerSettings = new Measurer.Settings(Sampler.Settings.ofBudgetMillis(config.measuring().budgetMillis()), config.dims(),
        CommandRunner.processes(), config.measuring().measureMemory(), config.measuring().spinning());
  }

  /**
   * Creates the topics, scans the model repository (a repository the scan refuses stops the start),
   * queues the first probe and publication of the environment, and starts consuming requests.
   * Returns without waiting for the baseline benchmark; requests are measured after it.
   */
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
    models = RepositoryModels.scan(config.modelRepository());
    try (Admin admin = Admin.create(clientProps(AdminClientConfig.CLIENT_ID_CONFIG, "partita-profiler-admin-" + config.hostId()))) {
      TopicAdmin.ensure(admin, topics.infrastructure(), (short) 3);
    }
    if (config.metricsPort() > 0) {
      endpoint = resources.register("metrics endpoint", new MetricsEndpoint(registry, config.metricsPort()));
    }
    producer = new KafkaProducer<>(producerProps());
    resources.register("producer", () -> producer.close(Duration.ofSeconds(5)));
    measuringPublisher = new EventPublisher(producer, topics, config.kafka().codecs(), System::currentTimeMillis, metrics);
    if (config.idle().check()) {
      gate = new IdleGate(config.idle(), System::currentTimeMillis);
      follower = new SlotStatusFollower(new KafkaConsumer<>(statusConsumerProps()), topics, config.kafka().codecs(),
          config.hostId(), gate);
      followerThread = new Thread(follower, "partita-profiler-slot-status");
      followerThread.setDaemon(true);
      followerThread.start();
      resources.register("slot status follower", () -> {
        follower.stop();
        join(followerThread);
      });
    }
    measuring = Executors.newSingleThreadExecutor(daemon("partita-profiler-measure"));
    // Interrupts the measurement in progress: it stops between points, and its request, not committed, is measured again on the next start.
    resources.register("measuring thread", () -> {
      measuring.shutdownNow();
      measuring.awaitTermination(10, TimeUnit.SECONDS);
    });
    CompletableFuture<Void> first = CompletableFuture.runAsync(() -> probeAndPublish(true), measuring);
    first.whenComplete((ok, e) -> {
      if (e != null) {
        log.error("The first environment of host {} could not be published", config.hostId(), e);
      }
    });
    if (config.probing().reprobeMillis() > 0) {
      reprobing = Executors.newSingleThreadScheduledExecutor(daemon("partita-profiler-reprobe"));
      reprobing.scheduleWithFixedDelay(this::reprobe, config.probing().reprobeMillis(), config.probing().reprobeMillis(),
          TimeUnit.MILLISECONDS);
      resources.register("re-probing", reprobing::shutdownNow);
    }
    loop = new RequestLoop(new KafkaConsumer<>(consumerProps()),
        new EventPublisher(producer, topics, config.kafka().codecs(), System::currentTimeMillis, metrics), topics, config.kafka().codecs(),
        config.hostId(), config.measuring().budgetMillis(), this::submit);
    loopThread = new Thread(loop, "partita-profiler-requests");
    loopThread.start();
    resources.register("request loop", () -> {
      loop.stop();
      join(loopThread);
    });
    log.info("Profiler {} consuming {} (models in {}), budget {} ms per point, idle check {}, metrics on {}",
        config.hostId(), topics.profileRequests(), config.modelRepository(), config.measuring().budgetMillis(), config.idle(),
        endpoint == null ? "no port" : "port " + endpoint.port());
  }

  /**
   * Profiles a model now, as if a request had come for this host, and publishes the results like a
   * request's: timing events, then status under the returned outcome's request id. Runs after any
   * measuring already queued; returns at once.
   *
   * @param version one version id, or null for every version
   * @param budgetMillis time budget per point; 0 = {@code profiler.budget.ms}
   */
  public CompletableFuture<ProfileOutcome> profileNow(String model, String version, long budgetMillis) {
    String requestId = "now-" + config.hostId() + "-" + UUID.randomUUID();
    return profile(ProfileSpec.defaults(requestId, model, version,
        budgetMillis > 0 ? budgetMillis : config.measuring().budgetMillis()));
  }

  private static final String START_PREFIX = "start-";

  /**
   * Whether a profile status's request id is that of a start-up profile of {@code host} ({@link
   * #profileAtStart}): what a caller waiting for a host's start-up measurements to end looks for.
   */
  public static boolean isStartProfile(String requestId, String host) {
    return requestId.startsWith(START_PREFIX + host + "-");
  }

  /**
   * Start-up profiling of every version of a model, as {@link #profileNow}, except that it yields to
   * serving: before each point it waits for the host's slots to be idle ({@link IdleWait#PER_STEP}),
   * so it measures while they are idle and pauses, point by point, while they serve.
   */
  public CompletableFuture<ProfileOutcome> profileAtStart(String model, long budgetMillis) {
    String requestId = START_PREFIX + config.hostId() + "-" + UUID.randomUUID();
    return profile(ProfileSpec.defaults(requestId, model, null, budgetMillis > 0 ? budgetMillis : config.measuring().budgetMillis()),
        IdleWait.PER_STEP);
  }

  /** Profiles what {@code spec} says on the measuring thread; see {@link #profileNow}. */
  public CompletableFuture<ProfileOutcome> profile(ProfileSpec spec) {
    return profile(spec, IdleWait.PER_REQUEST);
  }

  private CompletableFuture<ProfileOutcome> profile(ProfileSpec spec, IdleWait rule) {
    if (measuring == null) {
      throw new IllegalStateException("the profiler is not started");
    }
    metrics.requested();
    try {
      return CompletableFuture.supplyAsync(() -> {
        boolean ok = false;
        try {
          ProfileOutcome outcome = execute(spec, rule);
          ok = outcome.error() == null;
          return outcome;
        } finally {
          metrics.finished(ok);
        }
      }, measuring);
    } catch (RejectedExecutionException e) {
      metrics.finished(false);
      throw e;
    }
  }

  private CompletableFuture<ProfileOutcome> submit(ProfileSpec spec) {
    return profile(spec);
  }

  /** One job on the measuring thread: runs the spec, publishes everything, waits for the acks. */
  private ProfileOutcome execute(ProfileSpec spec, IdleWait rule) {
    String host = config.hostId();
    ProbedHost env = published != null ? published : probe.probe();
    measuringPublisher.status(spec.requestId(), host, AvroMapper.RUNNING, 0, 0, null);
    ProfileOutcome outcome = new ProfileRunner(ort, measurerSettings).run(spec, env, models, sink(spec.requestId(), rule));
    if (outcome.error() != null) {
      log.warn("Profile request {} for model {} failed: {}", spec.requestId(), spec.model(), outcome.error());
      measuringPublisher.status(spec.requestId(), host, AvroMapper.FAILED, outcome.steps(), outcome.steps(),
          outcome.error());
    } else {
      String message = outcome.failedSteps() == 0
          ? "measured " + outcome.steps() + " points of " + spec.model() + " versions " + outcome.versions()
          : outcome.failedSteps() + " of " + outcome.steps() + " points failed (see their timing events); versions "
              + outcome.versions();
      measuringPublisher.status(spec.requestId(), host, AvroMapper.DONE, outcome.steps(), outcome.steps(), message);
    }
    awaitAcks();
    return outcome;
  }

  /**
   * The sinks of one request: wait for idle slots (when checked), time the step, publish the timing
   * event with the condition it started under.
   */
  private ProfileSink sink(String requestId, IdleWait rule) {
    if (gate == null) {
      return new MeteredSink(metrics, measuringPublisher.sink(requestId, config.hostId(), null));
    }
    IdleGatedSink gated = new IdleGatedSink(gate, rule, decision -> {
      metrics.idleWait(decision);
      if (decision.condition() == MeasuringCondition.BUSY_AFTER_WAIT && decision.waitedMillis() > 0) {
        log.info("Measuring for request {} while the slots of host {} are busy ({}) after waiting {} ms", requestId,
            config.hostId(), decision.reading(), decision.waitedMillis());
      }
    });
    return gated.around(new MeteredSink(metrics, measuringPublisher.sink(requestId, config.hostId(), gated::current, null)));
  }

  private void awaitAcks() {
    try {
      measuringPublisher.awaitAcks();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the broker's acknowledgements", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("the broker refused a profiler record: " + e.getCause().getMessage(), e.getCause());
    }
  }

  /** Probes; publishes when forced or when the host changed, with a fresh baseline when enabled. */
  private void probeAndPublish(boolean force) {
    ProbedHost env = probe.probe();
    ProbedHost last = published;
    if (!force && last != null && env.sameHostAs(last)) {
      return;
    }
    if (config.probing().baseline()) {
      if (last == null) {
        // The host's pools first, so the planner can place default instances at once; the
        // baseline benchmark takes seconds and only refines version predictions.
        measuringPublisher.environment(env);
        awaitAcks();
      }
      env = withBaseline(env);
    }
    measuringPublisher.environment(env);
    awaitAcks();
    published = env;
    log.info("Published the environment of host {} ({} usable cores, providers {}, baseline {})", env.hostId(),
        env.usableCores(), env.executionProviders(), env.baseline() == null ? "none" : env.baseline().throughput());
  }

  private ProbedHost withBaseline(ProbedHost env) {
    Measurer measurer = new Measurer(ort, env, new Measurer.Settings(
        Sampler.Settings.ofBudgetMillis(config.probing().baselineBudgetMillis()), Map.of(), measurerSettings.commands(), false,
        config.measuring().spinning()));
    try {
      return env.withBaseline(new BaselineBenchmark(measurer).run(false, ProgressListener.NONE).score());
    } catch (IllegalStateException e) {
      log.warn("The baseline benchmark failed on host {}; publishing the environment without a score: {}",
          env.hostId(), e.getMessage());
      return env;
    }
  }

  private void reprobe() {
    if (closed) {
      return;
    }
    try {
      CompletableFuture.runAsync(() -> probeAndPublish(false), measuring).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | RuntimeException e) {
      log.warn("Re-probing host {} failed: {}", config.hostId(), e.getMessage());
    }
  }

  /** The environment last published, or null before the first one was acknowledged. */
  public ProbedHost environment() {
    return published;
  }

  /** The failure that stopped the request loop, or null while it runs. */
  public Throwable failure() {
    return loop == null ? null : loop.failure();
  }

  public Topics topics() {
    return topics;
  }

  /** The profiler's metrics ({@link ProfilerMetrics}), also served on {@code /metrics} when {@code profiler.metrics.port} is set. */
  public ProfilerMetrics metrics() {
    return metrics;
  }

  /** The port of {@code /metrics}, or -1 without an endpoint. */
  public int metricsPort() {
    return endpoint == null ? -1 : endpoint.port();
  }

  /**
   * Also reads this host's slot statuses from {@code slots} every {@code every} (a worker in this
   * process: {@code partita local}), besides {@code <prefix>.workers.status}, where a worker publishes
   * them only every {@code worker.status.interval.ms} (10 s by default) and on a change of health or
   * mounts: the profiler then pauses within {@code every} of the first requests, not seconds later.
   * The same statuses, read sooner: newer ones replace older ones whichever way they came, and a slot
   * that leaves the list is removed. Nothing happens when the idle check is off.
   */
  public void watchSlots(Supplier<List<SlotLoad>> slots, Duration every) {
    if (gate == null || localSlots != null) {
      return;
    }
    localSlots = Executors.newSingleThreadScheduledExecutor(daemon("partita-profiler-local-slots"));
    resources.register("local slot reader", localSlots::shutdownNow);
    Set<String> seen = new HashSet<>();
    localSlots.scheduleWithFixedDelay(() -> {
      try {
        Set<String> now = new HashSet<>();
        for (SlotLoad load : slots.get()) {
          gate.update(load);
          now.add(load.slot());
        }
        seen.stream().filter(slot -> !now.contains(slot)).forEach(gate::remove);
        seen.clear();
        seen.addAll(now);
      } catch (RuntimeException e) {
        log.debug("Reading the slots of host {} in this process failed: {}", config.hostId(), e.toString());
      }
    }, 0, every.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The host's serving load as the idle check sees it, or null when the check is off. */
  public IdleGate idleGate() {
    return gate;
  }

  private Properties clientProps(String key, String value) {
    Properties p = config.kafka().base();
    p.put(key, value);
    return p;
  }

  private Properties producerProps() {
    Properties p = clientProps(ProducerConfig.CLIENT_ID_CONFIG, "partita-profiler-" + config.hostId());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "5");
    return p;
  }

  /** The slot-status follower assigns partitions itself: no group, nothing committed. */
  private Properties statusConsumerProps() {
    Properties p = clientProps(ConsumerConfig.CLIENT_ID_CONFIG, "partita-profiler-status-" + config.hostId());
    p.remove(ConsumerConfig.GROUP_ID_CONFIG);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  private Properties consumerProps() {
    Properties p = clientProps(ConsumerConfig.CLIENT_ID_CONFIG, "partita-profiler-" + config.hostId());
    // One group per host: every profiler reads every request, and skips those for other hosts.
    p.put(ConsumerConfig.GROUP_ID_CONFIG, config.kafka().topicPrefix() + ".profiler." + config.hostId());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    // A host's first start works through the requests still on the topic (those for "*" included),
    // so a host that joins later measures what the others were asked to.
    p.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "16");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * Stops consuming, interrupts the measurement in progress (it stops between points; its request
   * is not committed and is measured again on the next start) and closes the producer.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    resources.close();
  }

  private static void join(Thread thread) {
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

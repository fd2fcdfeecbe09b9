package io.partita.worker;

import ai.onnxruntime.OrtEnvironment;
import com.sun.management.OperatingSystemMXBean;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.avro.AssignedServiceModel;
import io.partita.avro.MountStatus;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TopicPartitions;
import io.partita.common.Service;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.config.ConfigException;
import io.partita.common.health.Loop;
import io.partita.common.health.Loops;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.lifecycle.Closer;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.runtime.Cgroups;
import io.partita.runtime.Pinning;
import io.partita.runtime.SessionOpener;
import io.partita.worker.balance.ServingCost;
import io.partita.worker.balance.TopicCapacity;
import io.partita.worker.catalog.CatalogIndex;
import io.partita.worker.kafka.CapacityAssignor;
import io.partita.worker.kafka.CatalogSnapshot;
import io.partita.worker.kafka.PlanFollower;
import io.partita.worker.kafka.RequestLoop;
import io.partita.worker.kafka.StatusPublisher;
import io.partita.worker.metrics.MetricsServer;
import io.partita.worker.metrics.WorkerHealth;
import io.partita.worker.metrics.WorkerMetrics;
import io.partita.worker.slot.Assignments;
import io.partita.worker.slot.Slot;
import io.partita.worker.slot.SlotSpec;
import io.partita.worker.slot.Slots;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inference worker: runs the slots its static assignment gives this host (one per partition;
 * see {@link Assignments}), or, with {@code worker.follow-plan}, the slots {@code <prefix>.plan.assignments}
 * gives it once the plan has any (see {@link PlanFollower} and {@link Slots#apply}), consumes the request topics of the service models they serve as one
 * member of the consumer group {@code <prefix>.workers}, batches requests per slot, replies, and
 * publishes slot status and metrics. Each request is served by exactly one live worker; a worker
 * that dies hands its partitions, and their unanswered requests, to the others (docs/operate.md, "Delivery").
 *
 * <p>The models it may serve are a scan of {@code model.repo}, or, with {@code worker.models.from=catalog},
 * the catalog's ({@link CatalogIndex}), whose files the slots fetch by URI into {@code worker.model.cache.dir}
 * and check before loading (docs/models.md, "Model files by URI").
 */
public final class InferenceWorker implements Service {
  private static final Logger log = LoggerFactory.getLogger(InferenceWorker.class);
  private static final Duration SLOT_START = Duration.ofMinutes(5);

  private final WorkerConfig config;
  private final Topics topics;
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  /** The worker's loops: {@code /health/ready} and the loop gauges read them. */
  private final Loops loops = new Loops();
  /** What {@link #start} started, closed in reverse order by {@link #close}. */
  private final Closer resources = new Closer("inference worker");
  private final AtomicBoolean slotsStopped = new AtomicBoolean();
  private final WorkerHealth health = new WorkerHealth(loops, this::slotProblem);
  private Slots slots;
  private KafkaProducer<String, byte[]> producer;
  private volatile StatusPublisher status;
  private RequestLoop loop;
  private Thread thread;
  private MetricsServer metricsServer;
  private final AtomicReference<List<TopicPartitions>> owned = new AtomicReference<>(List.of());
  private RepositoryIndex index;
  private List<Integer> usable;
  private Assignments.Defaults defaults;
  private PlanFollower follower;
  /** Whether the start-up slots ran their warm-up (readiness waits for it). */
  private volatile boolean warmedUp;
  /** Why the plan's latest assignment for this host is not applied, or null. */
  private volatile String planProblem;
  /** FAILED status of the planned slots that could not be opened, by host/slot; replaced on every change. */
  private volatile Map<String, SlotStatus> refused = Map.of();
  /** The capacity the plan gives each slot (host/slot), items/s; 0 or absent = not known. */
  private volatile Map<String, Double> plannedCapacity = Map.of();
  /** What this worker tells the request group it offers each base model's topic (see {@link CapacityAssignor}). */
  private final CapacityAssignor.Advertised advertised = new CapacityAssignor.Advertised(this::capacities);
  /** What an item costs this worker beyond the engine's run; sampled with every status, published in its serving evidence. */
  private final ServingCost servingCost = new ServingCost();
  private final Cgroups cgroups = Cgroups.live();
  private WorkerMetrics metrics;

  public InferenceWorker(WorkerConfig config) {
    this.config = config;
    this.topics = config.kafka().topics();
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
    // Registered first, so closed last: /metrics and the health check answer while the worker drains.
    resources.register("metrics endpoint", () -> {
      if (metricsServer != null) {
        metricsServer.close();
      }
    });
    index = loadIndex();
    usable = Pinning.usableCpus();
    WorkerConfig.SlotSettings s = config.slots();
    defaults = new Assignments.Defaults(config.hostId(), config.intraOpThreads(),
        config.batching().maxBatch(), s.weightBudgetBytes(), s.spin());
    List<SlotAssignment> assignments;
    String source;
    if (s.assignmentFile() != null) {
      assignments = Assignments.read(s.assignmentFile(), index, config.hostId());
      source = "worker.assignments=" + s.assignmentFile();
    } else {
      assignments = Assignments.fromSettings(index, defaults, s.partitions(), config.cuda() ? s.gpu() : -1, usable);
      source = s.partitions().isEmpty() ? "the default assignment" : "worker.partitions";
    }
    List<SlotSpec> specs = Assignments.resolve(assignments, index, defaults, usable, source);
    if (specs.isEmpty()) {
      log.warn("No slot is assigned to host {} ({}); the worker serves nothing", config.hostId(), source);
    }
    WorkerMetrics metrics = new WorkerMetrics(registry);
    this.metrics = metrics;
    metrics.itemOverhead(() -> {
      synchronized (servingCost) {
        return servingCost.overheadSeconds().orElse(Double.NaN);
      }
    });
    slots = new Slots(index, specs, new Slots.Settings(config.batching().maxDelayMs(), s.shareSessions(),
        config.batching().acrossWeightFiles(), s.modelCache(), Optional.ofNullable(config.modelRepository()), s.warmUpRequests()),
        new SessionOpener(OrtEnvironment.getEnvironment(), SessionOpener.CudaFallback.TO_CPU), metrics, System::currentTimeMillis, this::statusChanged);
    // The slots stop after the request loop (below) and before the last status; they are let go
    // only after the producer, since the last status still reads them. This covers a failed start.
    resources.register("slots", () -> {
      stopSlots();
      slots = null;
    });

    Set<String> served = new TreeSet<>(slots.serviceModels());
    if (s.followPlan()) {
      served.addAll(index.serviceModels().keySet()); // the plan may put any of them here
    }
    // One request topic per base model, whatever number of service models (weight files) it carries.
    Set<String> requestTopics = new TreeSet<>();
    for (String m : served) {
      requestTopics.add(topics.requests(index.serviceModel(m).map(e -> e.baseModel()).orElse(m)));
    }
    Map<String, Integer> sizes = new TreeMap<>();
    for (ServiceModelEntry e : index.serviceModels().values()) {
      sizes.put(topics.requests(e.baseModel()), config.operation().requestPartitions());
    }
    requestTopics.forEach(t -> sizes.put(t, config.operation().requestPartitions()));
    try (Admin admin = Admin.create(adminProps())) {
      TopicAdmin.ensure(admin, topics.infrastructure(), (short) 3);
      TopicAdmin.ensure(admin, sizes.entrySet().stream().map(e -> TopicSpec.stream(e.getKey(), e.getValue())).toList(), (short) 3);
    }

    slots.start(SLOT_START);
    // Before the first status: the gateway routes to a slot once the planner has read it ready.
    slots.warmUp(s.warmUpRequests());
    warmedUp = true;
    producer = resources.register("producer", new KafkaProducer<>(producerProps()));
    status = new StatusPublisher(producer, topics, config.kafka().codecs(), this::statuses, config.operation().statusIntervalMs(),
        loop("worker-status", metrics));
    status.start();
    resources.register("status publisher", status); // publishes a last STOPPED status
    // Runs what the slots still hold once the request loop stopped, while the status publisher can still say so.
    resources.register("slots' drain", this::stopSlots);
    if (!served.isEmpty()) {
      loop = new RequestLoop(new KafkaConsumer<>(consumerProps()), producer, slots, topics, config.kafka().codecs(),
          new RequestLoop.Settings(List.copyOf(requestTopics), config.batching().maxOpen(),
              config.operation().drainTimeoutMs(), advertised::changed, advertised::move),
          metrics, System::currentTimeMillis, this::ownershipChanged, loop("worker-requests", metrics));
      thread = new Thread(loop, "partita-worker");
      thread.start();
      resources.register("request loop", this::stopRequests);
    }
    if (s.followPlan()) {
      follower = new PlanFollower(new KafkaConsumer<>(planConsumerProps()), topics.planAssignments(config.kafka().codecs()),
          config.hostId(), this::planChanged, loop("worker-plan", metrics));
      follower.start();
      resources.register("plan follower", follower);
    }
    if (config.operation().metricsPort() > 0) {
      metricsServer = new MetricsServer(registry, health, config.operation().metricsPort());
    }
    log.info("Inference worker {} runs {} slots serving {} service models from {} (batches up to {} rows, {} ms delay){}",
        config.hostId(), specs.size(), served.size(), requestTopics, config.batching().maxBatch(), config.batching().maxDelayMs(),
        metricsServer == null ? "" : "; metrics on :" + metricsServer.port() + "/metrics");
  }

  /**
   * The plan's assignments for this host changed: open the new slots, move the service models to
   * them and drain the old ones. An assignment that cannot be applied leaves the current slots
   * serving; the reason goes into their status and into a FAILED status of each planned slot.
   */
  private void planChanged(List<SlotAssignment> planned) {
    String source = topics.planAssignments() + " for host " + config.hostId();
    String problem = null;
    if (planned.isEmpty()) {
      log.warn("The plan assigns no slot to host {} now; the worker keeps serving from its current slots", config.hostId());
    } else {
      try {
        refreshIfPlannedModelIsNew(planned);
        List<SlotSpec> specs = Assignments.resolve(planned, index, defaults, usable, source);
        Map<String, Double> capacity = new TreeMap<>();
        planned.forEach(a -> capacity.put(a.getHost() + "/" + a.getSlot(), a.getCapacity()));
        plannedCapacity = capacity;
        if (!slots.wouldReplace(specs)) {
          // Only the slots' capacity or largest batch changed (both move as timings arrive): the
          // assignor reads the capacity at its next check, a running slot takes the batch in place.
          log.debug("The plan's assignments for host {} changed only in capacity or largest batch: {}", config.hostId(),
              capacity);
        } else {
          log.info("Applying the plan's assignments for host {}: {}", config.hostId(), specs.stream().map(SlotSpec::slot).toList());
        }
        Slots.Change change = slots.apply(specs, SLOT_START, Duration.ofMillis(config.operation().drainTimeoutMs() + 5_000));
        problem = change.applied() ? null : source + ": " + change.reason();
        change.retired().forEach(status::tombstone);
      } catch (ConfigException e) {
        problem = e.getMessage();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    Map<String, SlotStatus> before = refused;
    Map<String, SlotStatus> now = new TreeMap<>();
    if (problem != null) {
      log.error("The plan's assignments are not applied; the current slots keep serving: {}", problem);
      Set<String> running = new TreeSet<>();
      slots.slots().forEach(slot -> running.add(slot.spec().name()));
      for (SlotAssignment a : planned) {
        String key = a.getHost() + "/" + a.getSlot();
        if (!running.contains(key)) {
          now.put(key, refusedStatus(a, problem));
        }
      }
    }
    planProblem = problem;
    refused = Map.copyOf(now);
    Set<String> live = new TreeSet<>(now.keySet());
    slots.slots().forEach(slot -> live.add(slot.spec().name()));
    before.keySet().stream().filter(k -> !live.contains(k)).forEach(status::tombstone);
    statusChanged();
  }

  private static SlotStatus refusedStatus(SlotAssignment a, String problem) {
    List<MountStatus> mounts = new ArrayList<>();
    for (AssignedServiceModel s : a.getServiceModels()) {
      mounts.add(MountStatus.newBuilder().setServiceModel(s.getServiceModel()).setInstanceId(s.getInstanceId())
          .setWeightFile(s.getWeightFile() == null ? null : s.getWeightFile().getPath())
          .setSha256(s.getWeightFile() == null ? null : s.getWeightFile().getSha256())
          .setState("NOT_READY").setReason(problem).build());
    }
    return SlotStatus.newBuilder().setHost(a.getHost()).setSlot(a.getSlot()).setModel(a.getModel()).setVersion(a.getVersion())
        .setPool(a.getPool()).setProvider(a.getProvider()).setCpus(a.getCpus()).setGpu(a.getGpu()).setThreads(a.getThreads())
        .setHealth("FAILED").setMessage("not opened: " + problem).setMaxBatch(a.getMaxBatch())
        .setMemoryBudgetBytes(a.getMemoryBudgetBytes()).setServiceModels(mounts).setTimestamp(System.currentTimeMillis()).build();
  }

  /** Every slot's status, with the request partitions this worker owns, and the planned slots that were refused. */
  private List<SlotStatus> statuses() {
    List<TopicPartitions> partitions = owned.get();
    String problem = planProblem;
    OptionalDouble overhead = itemOverhead();
    List<SlotStatus> out = new ArrayList<>();
    for (SlotStatus s : slots.statuses()) {
      SlotStatus.Builder b = SlotStatus.newBuilder(s).setRequestPartitions(partitions);
      if (s.getServing() != null && overhead.isPresent()) {
        b.setServing(ServingEvidence.newBuilder(s.getServing()).setItemOverheadNanos(Math.round(overhead.getAsDouble() * 1e9)).build());
      }
      if (problem != null) {
        b.setMessage((s.getMessage() == null ? "" : s.getMessage() + "; ") + "the plan's assignment is not applied: " + problem);
      }
      out.add(b.build());
    }
    out.addAll(refused.values());
    return out;
  }

  /**
   * What this worker offers each request topic now: its READY or DEGRADED slots of the topic's base
   * model and the capacity the plan gives them (unknown for slots the plan did not size: the
   * start-up slots, default placements).
   */
  private Map<String, TopicCapacity> capacities() {
    Slots current = slots;
    if (current == null) {
      return Map.of();
    }
    Map<String, double[]> sums = new TreeMap<>(); // topic -> {capacity, slots, unknown}
    Map<String, Double> capacity = plannedCapacity;
    for (Slot slot : current.slots()) {
      if (slot.health() != Slot.Health.READY && slot.health() != Slot.Health.DEGRADED) {
        continue;
      }
      double[] sum = sums.computeIfAbsent(topics.requests(slot.spec().model()), t -> new double[3]);
      double c = capacity.getOrDefault(slot.spec().name(), 0.0);
      sum[0] += c > 0 ? c : 0;
      sum[1]++;
      sum[2] += c > 0 ? 0 : 1;
    }
    Map<String, TopicCapacity> out = new TreeMap<>();
    sums.forEach((topic, sum) -> out.put(topic, new TopicCapacity(sum[0], (int) sum[1], (int) sum[2])));
    return out;
  }

  /**
   * Samples what an item costs this worker beyond the engine's run ({@link ServingCost}) and returns
   * it, seconds of the host's CPU budget; empty until enough items ran. Called with every status.
   */
  private OptionalDouble itemOverhead() {
    WorkerMetrics counters = metrics;
    if (counters == null) {
      return OptionalDouble.empty();
    }
    synchronized (servingCost) {
      servingCost.sample(System.currentTimeMillis(), processCpuNanos(), counters.itemsRun(), counters.engineNanos(),
          cpuBudget());
      return servingCost.overheadSeconds();
    }
  }

  /** The CPU this host may use, in cores: its cgroup quota, at most the CPUs the worker may run on. */
  private double cpuBudget() {
    double cpus = Math.max(1, usable == null ? Runtime.getRuntime().availableProcessors() : usable.size());
    return Math.min(cpus, cgroups.cpuQuota().orElse(cpus));
  }

  private static long processCpuNanos() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os ? os.getProcessCpuTime() : 0;
  }

  private void ownershipChanged(Map<String, List<Integer>> byTopic) {
    List<TopicPartitions> list = new ArrayList<>();
    byTopic.forEach((topic, partitions) -> list.add(new TopicPartitions(topic, partitions)));
    owned.set(List.copyOf(list));
    statusChanged();
  }

  private void statusChanged() {
    StatusPublisher publisher = status;
    if (publisher != null) {
      publisher.changed();
    }
  }

  private Loop loop(String name, WorkerMetrics metrics) {
    Loop loop = loops.register(name);
    metrics.loop(loop);
    return loop;
  }

  /** A slot whose runner ended while the slot was not stopped (it cannot answer what it is given). */
  private Optional<String> slotProblem() {
    Slots current = slots;
    if (!warmedUp) {
      return Optional.of("the slots are opening and warming up their serving path (" + WorkerConfig.WARM_UP_KEY + ")");
    }
    if (current == null) {
      return Optional.of("the slots are closed");
    }
    for (Slot slot : current.slots()) {
      if (slot.health() != Slot.Health.STOPPED && slot.health() != Slot.Health.FAILED
          && !slot.runnerAlive()) {
        return Optional.of("slot " + slot.spec().name() + "'s runner ended");
      }
    }
    return Optional.empty();
  }

  /** Liveness and readiness, as {@code /health/live} and {@code /health/ready} answer them. */
  public WorkerHealth health() {
    return health;
  }

  /** The worker's loops and their states. */
  public Loops loops() {
    return loops;
  }

  /** The failure that stopped the request loop, or null while it runs. */
  public Throwable failure() {
    return loop == null ? null : loop.failure();
  }

  /** The slots, for status and tests. */
  public Slots slots() {
    return slots;
  }

  /** The worker's metrics (also served on {@code /metrics} when {@code worker.metrics.port} is set). */
  public PrometheusMeterRegistry metrics() {
    return registry;
  }

  private Properties base() {
    return config.kafka().base();
  }

  /**
   * A plan that places a model this worker's scan does not know (one copied into the repository
   * while it runs) makes it scan again, take the new entries and read the new base model's request
   * topic. A scan that fails leaves everything as it was (the plan is then refused, naming the model).
   */
  private void refreshIfPlannedModelIsNew(List<SlotAssignment> planned) {
    RepositoryIndex known = index;
    if (planned.stream().allMatch(a -> known.models().containsKey(a.getModel()))) {
      return;
    }
    RepositoryIndex newer;
    try {
      newer = loadIndex();
    } catch (RuntimeException e) {
      log.warn("The plan names a model this worker does not know, and {} cannot be read again: {}", modelSource(), e.getMessage());
      return;
    }
    slots.refresh(newer);
    index = newer;
    Set<String> requestTopics = new TreeSet<>();
    newer.serviceModels().values().forEach(e -> requestTopics.add(topics.requests(e.baseModel())));
    try (Admin admin = Admin.create(adminProps())) {
      TopicAdmin.ensure(admin, requestTopics.stream().map(t -> TopicSpec.stream(t, config.operation().requestPartitions())).toList(),
          (short) 3);
    } catch (RuntimeException e) { // the planner creates request topics too; reading waits until they exist
      log.warn("Could not create the request topics {}: {}", requestTopics, e.toString());
    }
    if (loop != null) {
      loop.readAlso(requestTopics);
    }
    log.info("Read {} again for a planned model it did not know: now {}", modelSource(), newer.models().keySet());
  }

  /**
   * The models this worker may serve: a scan of {@code model.repo}, or, with {@code worker.models.from=catalog},
   * the catalog as it stands now (files are fetched by their URIs when a slot needs them).
   */
  private RepositoryIndex loadIndex() {
    if (!config.slots().fromCatalog()) {
      return ModelRepository.scan(config.modelRepository());
    }
    try (Admin admin = Admin.create(adminProps())) {
      TopicAdmin.ensure(admin, topics.infrastructure(), (short) 3);
    }
    Path cache = config.slots().modelCache().orElseThrow();
    CatalogSnapshot snapshot = CatalogSnapshot.read(new KafkaConsumer<>(catalogConsumerProps()), topics, config.kafka().codecs(),
        Duration.ofSeconds(60));
    CatalogIndex.Folded folded = CatalogIndex.fold(snapshot.versions(), snapshot.services(),
        config.modelRepository() == null ? cache : config.modelRepository(), cache);
    folded.leftOut().forEach((key, why) -> log.warn("Catalog version {} is not served by this worker: {}", key, why));
    log.info("Worker {} serves the catalog's models {} (files fetched into {})", config.hostId(), folded.index().models().keySet(), cache);
    return folded.index();
  }

  private String modelSource() {
    return config.slots().fromCatalog() ? "the catalog (" + topics.catalogModels() + ")" : config.modelRepository().toString();
  }

  private Properties catalogConsumerProps() {
    Properties p = base();
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "partita-worker-catalog-" + config.hostId());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  private Properties adminProps() {
    Properties p = base();
    p.put(AdminClientConfig.CLIENT_ID_CONFIG, "partita-worker-admin-" + config.hostId());
    return p;
  }

  private Properties producerProps() {
    return config.kafka().producer();
  }

  private Properties planConsumerProps() {
    Properties p = base();
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "partita-worker-plan-" + config.hostId());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  private Properties consumerProps() {
    Properties p = base();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, topics.workersGroup());
    // names the host in the group, for the planner's host watcher (a host whose worker left gets no plan)
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, Topics.workerClientId(config.hostId()));
    if (!config.operation().groupInstanceId().isEmpty()) {
      p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.operation().groupInstanceId());
    }
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "256");
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Long.toString(config.operation().sessionTimeoutMs()));
    // five heartbeats per session timeout (Kafka asks for at least three; its default 3 s would be too few for 6 s)
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Long.toString(Math.max(500, config.operation().sessionTimeoutMs() / 5)));
    if (config.operation().assignment() == WorkerConfig.Assignment.CAPACITY) {
      // Kafka's cooperative-sticky as the fallback: a group whose members do not all know the
      // capacity assignor (a rolling upgrade) still agrees on a cooperative one.
      p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
          CapacityAssignor.class.getName() + "," + CooperativeStickyAssignor.class.getName());
      p.put(CapacityAssignor.ADVERTISED_CONFIG, advertised);
    } else {
      p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
    }
    // the planner grows a request topic when its base model gains instances; notice within seconds, not 5 minutes
    p.putIfAbsent(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "10000");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  /**
   * Stops fetching, answers and commits what is open (up to {@code worker.drain.timeout.ms}), runs
   * what the slots still hold, publishes a last STOPPED status, then releases everything.
   */
  @Override
  public void close() {
    resources.close();
  }

  /** Stops fetching and waits for what is open to be answered and committed ({@code worker.drain.timeout.ms}). */
  private void stopRequests() {
    loop.stop();
    try {
      thread.join(config.operation().drainTimeoutMs() + 15_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Runs what the slots still hold and stops them, once. */
  private void stopSlots() {
    Slots current = slots;
    if (current != null && slotsStopped.compareAndSet(false, true)) {
      current.stop(Duration.ofMillis(config.operation().drainTimeoutMs() + 5_000));
    }
  }
}

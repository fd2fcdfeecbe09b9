package io.partita.gateway;

import io.partita.common.Service;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.health.Loops;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.kafka.RequestTopics;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.lifecycle.Closer;
import io.partita.common.packing.PackRule;
import io.partita.gateway.catalog.CatalogReader;
import io.partita.gateway.catalog.CatalogView;
import io.partita.gateway.catalog.ModelCatalog;
import io.partita.gateway.dashboard.Dashboard;
import io.partita.gateway.dashboard.DashboardDoor;
import io.partita.gateway.grpc.GrpcApi;
import io.partita.gateway.grpc.GrpcFrontDoor;
import io.partita.gateway.health.CatalogReadiness;
import io.partita.gateway.health.GatewayLoops;
import io.partita.gateway.health.Readiness;
import io.partita.gateway.http.HttpApi;
import io.partita.gateway.http.JobsApi;
import io.partita.gateway.infer.Coalescer;
import io.partita.gateway.jobs.JobRunner;
import io.partita.gateway.jobs.JobStore;
import io.partita.gateway.kafka.DemandReporter;
import io.partita.gateway.kafka.ReplyRouter;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.kafka.RouteTable;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.gateway.oip.OipWarmUp;
import io.partita.gateway.routing.PlanRouting;
import io.partita.gateway.routing.Routing;
import io.partita.gateway.server.HttpFrontDoor;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.RepositoryIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The front door: Open Inference Protocol v2 over HTTP (JSON and binary tensors) and over gRPC
 * ({@code inference.GRPCInferenceService}), backed by Kafka, plus batch jobs and {@code /metrics}.
 * Both transports run on Netty event loops ({@link HttpFrontDoor}, {@link GrpcFrontDoor}) and hand
 * each call, once its body is in, to one handler executor. Each infer call becomes one record on
 * {@code <prefix>.requests.<service model>}, or shares one with concurrent calls of its kind
 * ({@link Coalescer}, {@code gateway.coalesce.enabled}); replies come back on this gateway's own topic
 * {@code <prefix>.replies.<gateway id>}. Handlers never block on Kafka: the answer is written
 * when the reply's future completes; job submission and result streaming run on their own threads.
 *
 * <p>With {@code gateway.routing=plan} (the default) a request is produced only while an instance of
 * its base model is ready, without a partition, so it lands on the workers in proportion to their
 * capacity ({@link RouteTable} reads {@code <prefix>.plan.routes}); a model without one is answered 503 before
 * anything is produced, and readiness follows the routes. With {@code any} requests go to the
 * request topic without a plan and readiness means: the model is in this gateway's model repository
 * and the gateway reads its reply topic.
 *
 * <p>The models it offers come from {@code model.repo}, scanned once at start, or, without one
 * (or with {@code gateway.models=catalog}), from the catalog topics, followed while it runs
 * ({@link CatalogReader}): such a gateway needs no model files and never loads ONNX Runtime; it
 * validates bodies and answers metadata from the signatures the catalog's version records carry.
 */
public final class Gateway implements Service {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);

  private final GatewayConfig config;
  private final Topics topics;
  private final GatewayLoops loops = new GatewayLoops();
  /** What {@link #start} started, closed in reverse order by {@link #close}. */
  private final Closer resources = new Closer("gateway");
  private HttpFrontDoor http;
  private GrpcFrontDoor grpc;
  private ExecutorService executor;
  private ExecutorService jobsExecutor;
  private KafkaProducer<String, byte[]> producer;
  private Admin admin;
  private ReplyRouter router;
  private Thread routerThread;
  private CatalogReader catalogReader;
  private Thread catalogThread;
  private RouteTable routeTable;
  private Thread routeTableThread;
  private JobStore jobStore;
  private Thread jobStoreThread;
  private JobRunner jobRunner;
  private Thread jobRunnerThread;
  private Capacity capacity;
  private ScheduledExecutorService demandTimer;
  private Dashboard dashboard;
  private volatile OipWarmUp.Outcome warmUp;
  /** Why the embedding process holds readiness ({@link #holdReady}), in the order asked. */
  private final Set<String> holds = new ConcurrentSkipListSet<>();

  public Gateway(GatewayConfig config) {
    this.config = config;
    this.topics = config.kafka().topics();
  }

  @Override
  public void start() throws Exception {
    try {
      startAll();
    } catch (Exception e) {
      resources.closeAfter(e);
      throw e;
    }
  }

  private void startAll() throws Exception {
    String replyTopic = topics.replies(config.gatewayId());
    List<TopicSpec> specs = new ArrayList<>(topics.infrastructure());
    specs.add(TopicSpec.stream(replyTopic, 1));
    admin = resources.register("admin client", Admin.create(config.kafka().base()));
    TopicAdmin.ensure(admin, specs, (short) 3);
    ModelCatalog catalog = catalog();
    RepositoryIndex index = catalog.current();
    // one request topic per base model offered at start (created here when missing; the planner
    // grows it with the instances, and creates those of models published later)
    List<TopicSpec> requestTopics = new ArrayList<>();
    new TreeSet<>(index.models().keySet()).forEach(b -> requestTopics.add(TopicSpec.stream(topics.requests(b),
        RequestTopics.DEFAULT_MIN_PARTITIONS)));
    TopicAdmin.ensure(admin, requestTopics, (short) 3);
    producer = resources.register("producer", new KafkaProducer<>(producerProps()));
    router = new ReplyRouter(new KafkaConsumer<>(consumerProps()), topics.replies(config.gatewayId(), config.kafka().codecs()),
        loops.register(GatewayLoops.REPLIES));
    routerThread = new Thread(router, "partita-gateway-replies");
    routerThread.start();
    resources.register("reply router", () -> stop(router, routerThread, 5000));
    router.ready().get(60, TimeUnit.SECONDS);
    Routing routing = Routing.any();
    if (config.steering().routing() == Routing.Mode.PLAN) {
      Properties routeProps = consumerProps();
      routeProps.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // the planner writes in transactions
      routeProps.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
      routeTable = new RouteTable(new KafkaConsumer<>(routeProps), topics.planRoutes(config.kafka().codecs()), loops.register(GatewayLoops.ROUTES));
      routeTableThread = new Thread(routeTable, "partita-gateway-routes");
      routeTableThread.setDaemon(true);
      routeTableThread.start();
      resources.register("route table", () -> stop(routeTable, routeTableThread, 5000));
      routeTable.caughtUp().get(60, TimeUnit.SECONDS);
      RouteTable table = routeTable;
      routing = new PlanRouting(table::route, table::routes, m -> topics.requests(catalog.baseModelOf(m)), table::reading);
    }
    RequestProducer requests = new RequestProducer(producer, router, routing,
        m -> topics.requests(catalog.baseModelOf(m), config.kafka().codecs()));
    capacity = new Capacity(config.limits().maxInFlight(), config.jobs().share());
    GatewayMetrics metrics = new GatewayMetrics(() -> catalog.current().serviceModels().keySet(), capacity);
    if (config.steering().demandIntervalMs() > 0) {
      DemandReporter demand = new DemandReporter(() -> baseModels(catalog), topics, producer, admin,
          config.kafka().codecs(), System::currentTimeMillis, loops.register(GatewayLoops.DEMAND));
      metrics.countDemandWith(demand::record);
      demandTimer = Executors.newSingleThreadScheduledExecutor(daemon("partita-demand"));
      resources.register("demand timer", demandTimer::shutdownNow);
      demandTimer.scheduleAtFixedRate(demand, config.steering().demandIntervalMs(), config.steering().demandIntervalMs(), TimeUnit.MILLISECONDS);
    }

    JobsApi jobsApi = null;
    if (config.jobs().enabled()) {
      jobStore = new JobStore(topics, producer, admin, () -> new KafkaConsumer<>(consumerProps()), config.kafka().codecs(), System::currentTimeMillis,
          loops.register(GatewayLoops.JOB_STATUS));
      jobStoreThread = new Thread(jobStore, "partita-jobs-status");
      jobStoreThread.start();
      resources.register("job store", () -> stop(jobStore, jobStoreThread, 5000));
      jobStore.caughtUp().get(60, TimeUnit.SECONDS);
      jobRunner = new JobRunner(new JobRunner.Context(topics, config.gatewayId(), jobStore, requests, producer, capacity, metrics,
          System::currentTimeMillis, new JobRunner.Items(config.jobs().itemTimeoutMs(), config.jobs().retries(), packing(catalog))),
          new KafkaConsumer<>(leaderProps()), loops.register(GatewayLoops.JOB_LEADER));
      jobRunnerThread = new Thread(jobRunner, "partita-jobs-leader");
      jobRunnerThread.start();
      // stops sending, flushes results, then leaves the group
      resources.register("job runner", () -> stop(jobRunner, jobRunnerThread, 40_000));
      jobsExecutor = Executors.newFixedThreadPool(4, daemon("partita-jobs-io"));
      resources.register("jobs executor", jobsExecutor::shutdownNow);
      jobsApi = new JobsApi(catalog, jobStore, jobRunner, config.apiKeys(), config.jobs(), jobsExecutor, config.limits().json());
    }

    GatewayConfig.Server server = config.server();
    executor = Executors.newFixedThreadPool(server.handlerThreads(), daemon("partita-handler"));
    resources.register("handler executor", executor::shutdownNow);
    metrics.watch(loops);
    // The JIT's warm-up of this gateway's part of a call, before the HTTP port opens (ready says 200 only after it).
    warmUp = OipWarmUp.run(signatures(catalog.current()), server.warmUpCalls(), config.limits().json());
    log.info("Warmed up the request path: {} bodies parsed and answers written for {} service models in {} ms{}", warmUp.calls(),
        warmUp.serviceModels(), warmUp.millis(), warmUp.problem() == null ? "" : " (" + warmUp.problem() + ")");
    Readiness readiness = new Readiness(loops.loops(), routing, () -> catalog.current().serviceModels().keySet())
        .withServerCheck(this::warmUpProblem)
        .withServerCheck(() -> holds.stream().findFirst())
        .withServerCheck(new CatalogReadiness(config.steering().readiness(), () -> catalog.current().serviceModels().keySet(), routing::ready));
    Coalescer coalescer = null;
    if (config.coalesce().enabled()) { // closed before the producer: calls still held are answered, not lost
      coalescer = resources.register("coalescer", new Coalescer(new Coalescer.Settings(config.coalesce().maxRows(), packBytes(),
          config.coalesce().windowMicros()), requests, capacity, metrics));
    }
    HttpApi.Deps deps = new HttpApi.Deps(catalog, requests, capacity, config.apiKeys(), metrics, jobsApi, readiness,
        new HttpApi.CallSettings(config.limits().timeoutMs(), config.limits().maxBodyBytes(), config.limits().retryAfterSeconds(),
            config.limits().json(), server.serverTiming()), coalescer);
    long jobsBody = config.jobs().maxBodyBytes();
    long inferBody = config.limits().maxBodyBytes();
    HttpFrontDoor.Handler handler = new HttpApi(deps);
    if (config.dashboard().enabled()) { // the live dashboard at /dashboard/ (docs/dashboard.md)
      dashboard = Dashboard.start(new Dashboard.Context(config.dashboard(), topics, config.kafka().codecs(), consumerProps(),
          config.apiKeys(), index.serviceModels().keySet(), metrics.registry(), new Loops()));
      resources.register("dashboard", dashboard);
      handler = new DashboardDoor(dashboard.api(), handler);
    }
    http = HttpFrontDoor.start(new HttpFrontDoor.Settings(config.server().httpPort(), server.headerTimeoutMs(), server.bodyTimeoutMs(),
            server.idleTimeoutMs(), server.maxConnections(), Math.max(2, Runtime.getRuntime().availableProcessors()),
            Math.max(1024, config.limits().maxInFlight() + 256)), // streams per connection: beyond the in-flight limit, so 429 comes first
        (method, path) -> path.startsWith("/v2/jobs") ? Math.max(jobsBody, inferBody) : inferBody,
        handler, executor);
    resources.register("HTTP transport", http);
    if (server.grpcPort() >= 0) {
      List<String> extensions = jobsApi == null ? List.of("binary_tensor_data") : List.of("binary_tensor_data", "partita_jobs");
      grpc = GrpcFrontDoor.start(new GrpcFrontDoor.Settings(server.grpcPort(), (int) Math.min(Integer.MAX_VALUE, inferBody),
          server.headerTimeoutMs(), server.idleTimeoutMs(), 1000), new GrpcApi(deps.inferService(), metrics, extensions, server.serverTiming()), executor);
      resources.register("gRPC transport", grpc);
    }
    if (config.apiKeys().isOpen()) {
      log.warn("Gateway {} is OPEN: no API keys are configured (gateway.api-keys), so anyone who can reach port {} may call every model",
          config.gatewayId(), port());
    } else {
      log.info("Gateway {} requires an API key ({} configured)", config.gatewayId(), config.apiKeys().size());
    }
    log.info("Gateway {} listening on http://localhost:{}/v2 and gRPC {} for {} from {} (in-flight limit {}, jobs {}, routing {})", config.gatewayId(), port(),
        grpc == null ? "off (gateway.grpc-port=-1)" : "localhost:" + grpc.port(),
        index.serviceModels().keySet(), config.modelRepository().map(r -> "model repository " + r)
            .orElse("the catalog (" + topics.catalogModels() + ", followed)"), config.limits().maxInFlight(), config.jobs().enabled() ? "up to " + capacity.jobLimit() + " in flight" : "off",
        config.steering().routing() == Routing.Mode.PLAN ? "by " + topics.planRoutes() + " (gateway.routing=plan)"
            : "to any partition, no plan (gateway.routing=any)");
  }

  /**
   * How job rows of each service model are packed: up to {@code gateway.jobs.pack.rows} rows per
   * request where the model's first dimension is dynamic, within {@link #packBytes()}.
   */
  private Function<String, PackRule> packing(ModelCatalog catalog) {
    long maxBytes = packBytes();
    return serviceModel -> {
      RepositoryIndex index = catalog.current(); // one snapshot: the service model and its base model agree
      return index.serviceModel(serviceModel).flatMap(s -> index.model(s.baseModel()))
          .map(m -> new PackRule(m.signature(), config.jobs().packRows(), maxBytes))
          .orElse(PackRule.alone());
    };
  }

  /**
   * The most tensor bytes one packed request may carry, job rows or online calls: half of the
   * smallest of {@code gateway.max.body.bytes}, the producer's {@code max.request.size} and the reply
   * topic's {@code max.message.bytes} (room for the record's own fields and for a reply larger than
   * its request).
   */
  private long packBytes() {
    // A reply is one record on this gateway's reply topic: the broker refuses one over the topic's limit.
    long replyLimit = TopicAdmin.maxMessageBytes(admin, topics.replies(config.gatewayId()));
    return PackRule.bytesWithin(config.limits().maxBodyBytes(), KafkaClients.maxRequestSize(producerProps()), replyLimit);
  }

  /** The repository scanned once, or the catalog topics read up to their ends and then followed. */
  private ModelCatalog catalog() throws Exception {
    if (config.modelRepository().isPresent()) {
      return ModelCatalog.fixed(ModelRepository.scan(config.modelRepository().get()));
    }
    CatalogView view = new CatalogView();
    Properties props = consumerProps();
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
    catalogReader = new CatalogReader(new KafkaConsumer<>(props), topics.catalogModels(config.kafka().codecs()), topics.catalogServices(config.kafka().codecs()),
        view, loops.register(GatewayLoops.CATALOG));
    catalogThread = new Thread(catalogReader, "partita-gateway-catalog");
    catalogThread.setDaemon(true);
    catalogThread.start();
    resources.register("catalog reader", () -> stop(catalogReader, catalogThread, 5000));
    catalogReader.caughtUp().get(60, TimeUnit.SECONDS);
    return view;
  }

  /**
   * Keeps {@code /v2/health/ready} at 503, saying {@code reason}, until the returned hold is closed,
   * whatever else is ready; infer calls are served meanwhile (a model's own readiness is not held).
   * For the process that embeds the gateway: {@code partita local} holds it while it warms its
   * serving path up through it. May be called before {@link #start}.
   */
  public AutoCloseable holdReady(String reason) {
    holds.add(reason);
    return () -> holds.remove(reason);
  }

  /** Not ready before the request path's warm-up ran ({@code gateway.warm-up.calls}). */
  Optional<String> warmUpProblem() {
    return warmUp == null ? Optional.of("the request path is warming up (gateway.warm-up.calls)") : Optional.empty();
  }

  /** What the warm-up of the request path did, or null before it ran. */
  public OipWarmUp.Outcome warmUp() {
    return warmUp;
  }

  /** The signature of each offered service model (its base model's), for the warm-up. */
  private static Map<String, ModelSignature> signatures(RepositoryIndex index) {
    Map<String, ModelSignature> out = new TreeMap<>();
    index.serviceModels().values().forEach(sm -> index.model(sm.baseModel()).ifPresent(m -> out.put(sm.name(), m.signature())));
    return out;
  }

  private static Map<String, String> baseModels(ModelCatalog catalog) {
    Map<String, String> out = new TreeMap<>();
    catalog.current().serviceModels().values().forEach(m -> out.put(m.name(), m.baseModel()));
    return out;
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** The port HTTP listens on (useful when configured as 0). */
  public int port() {
    return http.port();
  }

  /** The port gRPC listens on (useful when configured as 0); -1 when gRPC is off. */
  public int grpcPort() {
    return grpc == null ? -1 : grpc.port();
  }

  /** The HTTP transport, for its connection counts. */
  public HttpFrontDoor http() {
    return http;
  }

  /** This gateway's loops and their state (readiness and metrics read them). */
  public GatewayLoops loops() {
    return loops;
  }

  /** Whether this gateway currently runs the batch jobs (it leads the job group). */
  public boolean runsJobs() {
    return jobRunner != null && jobRunner.leading();
  }

  private Properties producerProps() {
    Properties p = config.kafka().producer();
    p.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
    return p;
  }

  private Properties consumerProps() {
    Properties p = config.kafka().consumer();
    p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
    return p;
  }

  /** The job leader's consumer: in the group {@code <prefix>.gateway.jobs}, never reads, never commits. */
  private Properties leaderProps() {
    Properties p = consumerProps();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, config.kafka().topicPrefix() + ".gateway.jobs");
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
    // Another gateway takes the jobs of one that died once the group gives up on it: 10 s, not
    // Kafka's 45 s (kafka.session.timeout.ms overrides); one that stops cleanly hands over at once.
    p.putIfAbsent(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    p.putIfAbsent(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "2000");
    return p;
  }

  /**
   * Stops what {@link #start} started, the last started first: the transports, so no call comes in,
   * then the jobs, the readers, the producer and the admin client. Safe to call twice.
   */
  @Override
  public void close() {
    resources.close();
  }

  /** Closes a loop, then waits up to {@code ms} for its thread to end. */
  private static void stop(AutoCloseable loop, Thread thread, long ms) throws Exception {
    loop.close();
    try {
      thread.join(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

package io.partita.gateway;

import com.sun.net.httpserver.HttpServer;
import io.partita.common.Service;
import io.partita.common.TopicSpec;
import io.partita.common.Topics;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.kafka.TopicAdmin;
import io.partita.gateway.http.HttpApi;
import io.partita.gateway.http.JobsApi;
import io.partita.gateway.jobs.JobRunner;
import io.partita.gateway.jobs.JobStore;
import io.partita.gateway.kafka.DemandReporter;
import io.partita.gateway.kafka.ReplyRouter;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.kafka.RouteTable;
import io.partita.gateway.routing.PlanRouting;
import io.partita.gateway.routing.Routing;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.metrics.GatewayMetrics;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP front door: Open Inference Protocol v2 over HTTP (JSON and binary tensors), backed by
 * Kafka, plus batch jobs and {@code /metrics}. Each infer call becomes one record on
 * {@code <prefix>.requests.<service model>}; replies come back on this gateway's own topic
 * {@code <prefix>.replies.<gateway id>}. HTTP handlers never block on Kafka: the answer is written
 * when the reply's future completes; job submission and result streaming run on their own threads.
 *
 * <p>With {@code gateway.routing=plan} (the default) a request goes only to a ready instance of its
 * service model, the least loaded one, by producing to a partition its worker owns
 * ({@link RouteTable} reads {@code <prefix>.plan.routes}); a model without one is answered 503 before
 * anything is produced, and readiness follows the routes. With {@code any} requests go to the
 * request topic without a plan and readiness means: the model is in this gateway's model repository
 * and the gateway reads its reply topic.
 */
public final class Gateway implements Service {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);

  private final GatewayConfig config;
  private final Topics topics;
  private HttpServer http;
  private ExecutorService executor;
  private ExecutorService jobsExecutor;
  private KafkaProducer<String, byte[]> producer;
  private Admin admin;
  private ReplyRouter router;
  private Thread routerThread;
  private RouteTable routeTable;
  private Thread routeTableThread;
  private JobStore jobStore;
  private Thread jobStoreThread;
  private JobRunner jobRunner;
  private Thread jobRunnerThread;
  private Capacity capacity;
  private java.util.concurrent.ScheduledExecutorService demandTimer;
  private io.partita.gateway.dashboard.Dashboard dashboard;

  public Gateway(GatewayConfig config) {
    this.config = config;
    this.topics = new Topics(config.topicPrefix());
  }

  @Override
  public void start() throws Exception {
    try {
      startAll();
    } catch (Exception e) {
      close();
      throw e;
    }
  }

  private void startAll() throws Exception {
    RepositoryIndex index = ModelRepository.scan(config.modelRepository());
    String replyTopic = topics.replies(config.gatewayId());
    List<TopicSpec> specs = new ArrayList<>(topics.infrastructure());
    specs.add(TopicSpec.stream(replyTopic, 1));
    index.serviceModels().keySet().forEach(m -> specs.add(TopicSpec.stream(topics.requests(m), 4)));
    admin = Admin.create(base());
    TopicAdmin.ensure(admin, specs, (short) 3);
    producer = new KafkaProducer<>(producerProps());
    router = new ReplyRouter(new KafkaConsumer<>(consumerProps()), replyTopic, config.codecs());
    routerThread = new Thread(router, "partita-gateway-replies");
    routerThread.start();
    router.ready().get(60, TimeUnit.SECONDS);
    Routing routing = Routing.any();
    if (config.routing() == Routing.Mode.PLAN) {
      Properties routeProps = consumerProps();
      routeProps.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"); // the planner writes in transactions
      routeProps.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
      routeTable = new RouteTable(new KafkaConsumer<>(routeProps), topics.planRoutes(), config.codecs());
      routeTableThread = new Thread(routeTable, "partita-gateway-routes");
      routeTableThread.setDaemon(true);
      routeTableThread.start();
      routeTable.caughtUp().get(60, TimeUnit.SECONDS);
      RouteTable table = routeTable;
      routing = new PlanRouting(table::route, table::reading);
    }
    RequestProducer requests = new RequestProducer(producer, router, topics, replyTopic, config.codecs(), routing, System::currentTimeMillis);
    capacity = new Capacity(config.maxInFlight(), config.jobs().share());
    GatewayMetrics metrics = new GatewayMetrics(index.serviceModels().keySet(), capacity);
    if (config.demandIntervalMs() > 0) {
      DemandReporter demand = new DemandReporter(index.serviceModels().keySet(), topics, producer, admin,
          config.codecs().codec(io.partita.avro.Demand.class), System::currentTimeMillis);
      metrics.countDemandWith(demand::record);
      demandTimer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(daemon("partita-demand"));
      demandTimer.scheduleAtFixedRate(demand, config.demandIntervalMs(), config.demandIntervalMs(), TimeUnit.MILLISECONDS);
    }

    JobsApi jobsApi = null;
    if (config.jobs().enabled()) {
      jobsExecutor = Executors.newFixedThreadPool(4, daemon("partita-jobs-io"));
      jobStore = new JobStore(topics, producer, admin, () -> new KafkaConsumer<>(consumerProps()), config.codecs(), System::currentTimeMillis);
      jobStoreThread = new Thread(jobStore, "partita-jobs-status");
      jobStoreThread.start();
      jobStore.caughtUp().get(60, TimeUnit.SECONDS);
      jobRunner = new JobRunner(new JobRunner.Context(topics, config.gatewayId(), jobStore, requests, producer, capacity, metrics,
          config.jobs().itemTimeoutMs(), config.jobs().retries(), System::currentTimeMillis), new KafkaConsumer<>(leaderProps()));
      jobRunnerThread = new Thread(jobRunner, "partita-jobs-leader");
      jobRunnerThread.start();
      jobsApi = new JobsApi(index, jobStore, jobRunner, config.apiKeys(), config.jobs(), jobsExecutor);
    }

    http = HttpServer.create(new InetSocketAddress(config.httpPort()), 1024);
    executor = Executors.newFixedThreadPool(Math.max(4, Runtime.getRuntime().availableProcessors() * 2), daemon("partita-http"));
    http.setExecutor(executor);
    Routing routes = routing;
    ReplyRouter replies = router;
    http.createContext("/", new HttpApi(new HttpApi.Deps(index, requests, capacity, config.apiKeys(), metrics, jobsApi,
        () -> replies.reading() && routes.ready() && index.serviceModels().keySet().stream().anyMatch(routes::ready),
        config.timeoutMs(), config.maxBodyBytes(), config.retryAfterSeconds())));
    if (config.dashboard().enabled()) { // the live dashboard at /dashboard/ (docs/gateway.md#dashboard)
      dashboard = io.partita.gateway.dashboard.Dashboard.start(new io.partita.gateway.dashboard.Dashboard.Context(config.dashboard(), topics,
          config.codecs(), consumerProps(), config.apiKeys(), index.serviceModels().keySet(), metrics.registry(), new io.partita.common.health.Loops()));
      http.createContext("/dashboard", new io.partita.gateway.dashboard.SunHttpAdapter(dashboard.api()));
    }
    http.start();
    if (config.apiKeys().isOpen()) {
      log.warn("Gateway {} is OPEN: no API keys are configured (gateway.api-keys), so anyone who can reach port {} may call every model",
          config.gatewayId(), port());
    } else {
      log.info("Gateway {} requires an API key ({} configured)", config.gatewayId(), config.apiKeys().size());
    }
    log.info("Gateway {} listening on http://localhost:{}/v2 for {} (in-flight limit {}, jobs {}, routing {})", config.gatewayId(), port(),
        index.serviceModels().keySet(), config.maxInFlight(), config.jobs().enabled() ? "up to " + capacity.jobLimit() + " in flight" : "off",
        config.routing() == Routing.Mode.PLAN ? "by " + topics.planRoutes() + " (gateway.routing=plan)"
            : "to any partition, no plan (gateway.routing=any)");
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** The port HTTP listens on (useful when configured as 0). */
  public int port() {
    return http.getAddress().getPort();
  }

  /** Whether this gateway currently runs the batch jobs (it leads the job group). */
  public boolean runsJobs() {
    return jobRunner != null && jobRunner.leading();
  }

  private Properties base() {
    return KafkaClients.base(config.bootstrapServers(), config.kafka());
  }

  private Properties producerProps() {
    Properties p = KafkaClients.producer(config.bootstrapServers(), config.kafka());
    p.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
    return p;
  }

  private Properties consumerProps() {
    Properties p = KafkaClients.consumer(config.bootstrapServers(), config.kafka());
    p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
    return p;
  }

  /** The job leader's consumer: in the group {@code <prefix>.gateway.jobs}, never reads, never commits. */
  private Properties leaderProps() {
    Properties p = consumerProps();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, config.topicPrefix() + ".gateway.jobs");
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
    return p;
  }

  @Override
  public void close() {
    if (demandTimer != null) {
      demandTimer.shutdownNow();
      demandTimer = null;
    }
    if (dashboard != null) {
      dashboard.close();
      dashboard = null;
    }
    if (http != null) {
      http.stop(0);
      http = null;
    }
    if (executor != null) {
      executor.shutdownNow();
      executor = null;
    }
    if (jobRunner != null) {
      jobRunner.close(); // stops sending, flushes results, then leaves the group
      join(jobRunnerThread, 40_000);
      jobRunner = null;
    }
    if (jobsExecutor != null) {
      jobsExecutor.shutdownNow();
      jobsExecutor = null;
    }
    if (jobStore != null) {
      jobStore.close();
      join(jobStoreThread, 5000);
      jobStore = null;
    }
    if (routeTable != null) {
      routeTable.close();
      join(routeTableThread, 5000);
      routeTable = null;
    }
    if (router != null) {
      router.close();
      join(routerThread, 5000);
      router = null;
    }
    if (producer != null) {
      producer.close();
      producer = null;
    }
    if (admin != null) {
      admin.close();
      admin = null;
    }
  }

  private static void join(Thread thread, long ms) {
    try {
      thread.join(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

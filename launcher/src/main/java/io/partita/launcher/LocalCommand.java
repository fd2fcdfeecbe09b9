package io.partita.launcher;

import io.partita.common.config.Settings;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.gateway.routing.Routing;
import io.partita.launcher.broker.EmbeddedKafka;
import io.partita.models.demo.DemoRepository;
import io.partita.planner.PlannerConfig;
import io.partita.planner.PlannerService;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.catalog.CatalogPublisher;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.ProfilerService;
import io.partita.profiler.idle.SlotLoad;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The embedded default: a real KRaft broker in this JVM (unless {@code --bootstrap} names a
 * cluster), the demo model repository (unless {@code --model-repo} names one), the planner (with
 * the repository's catalog published), an inference worker, the gateway and the profiler, all in
 * one process. Ctrl-C stops everything; a second start reuses the data.
 */
@Command(name = "local", mixinStandardHelpOptions = true,
    description = "Run Partita end to end in one process: embedded Kafka, demo models, profiler, planner, worker and gateway.")
final class LocalCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(LocalCommand.class);

  @Mixin CommonOptions common;

  @Option(names = "--kafka-port", defaultValue = "19092", description = "Port of the embedded broker (default: ${DEFAULT-VALUE}).")
  int kafkaPort;

  @Option(names = "--data-dir", defaultValue = ".partita", description = "Where the embedded broker and demo models live (default: ${DEFAULT-VALUE}).")
  Path dataDir;

  @Option(names = "--http-port", defaultValue = "8080", description = "Gateway HTTP port (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--grpc-port", description = "Gateway gRPC port, OIP v2 GRPCInferenceService (default: 8001, or any free port"
      + " with --http-port 0; -1 = off).")
  Integer grpcPort;

  @Option(names = "--model-repo", paramLabel = "DIR", description = "Serve this model repository instead of the demo one.")
  Path modelRepo;

  @Option(names = "--base-uri", paramLabel = "URI", description = "Publish the catalog's model and weight files as URI/<path in"
      + " the repository> (catalog.base-uri), for workers that fetch them from a web server instead of reading the repository.")
  String baseUri;

  @Option(names = "--threads", defaultValue = "0", description = "ONNX Runtime threads per session; 0 = all cores.")
  int threads;

  @Option(names = "--no-profile", description = "Do not profile the served models at start. The planner then plans only"
      + " the models it has timings for (from an earlier run on the same Kafka, or from partita profiler); the others are"
      + " answered 503 until it has.")
  boolean noProfile;

  @Option(names = "--profile-budget-ms", defaultValue = "100", description = "Time budget per measured point when profiling at start (default: ${DEFAULT-VALUE}).")
  long profileBudgetMs;

  /**
   * The routing of {@code partita local} unless {@code --set gateway.routing=...} says otherwise:
   * {@code plan}. The worker follows {@code plan.assignments} ({@code worker.follow-plan=true}) and
   * reports the planned slots, their instance ids and its request partitions, so the planner marks
   * the route instances ready and the gateway sends each call to a partition of the least loaded
   * ready instance. Until the first plan (default single-core instances, as soon as the profiler
   * has published the host's cores) no route has a ready instance and calls are answered 503.
   */
  static final Routing.Mode LOCAL_ROUTING = Routing.Mode.PLAN;

  /** How often the planner of {@code partita local} may ask the profiler for a grouping-mode measurement, per pool. */
  static final long LOCAL_ASK_INTERVAL_MS = 10_000;

  /** How often the profiler reads the worker's slots in this process (its idle check before each point). */
  static final Duration LOCAL_SLOT_READING = Duration.ofMillis(500);

  static String routingLine(Routing.Mode mode) {
    return mode == Routing.Mode.PLAN
        ? "follows the plan (gateway.routing=plan): only to ready instances in partita.plan.routes, least loaded first"
        : "does not follow the plan (gateway.routing=any): requests go to the request topics, any worker in the group serves them";
  }

  @Override
  public Integer call() throws Exception {
    Files.createDirectories(dataDir);
    Services services = new Services();
    String bootstrap = common.bootstrap;
    if (bootstrap == null) {
      EmbeddedKafka kafka = new EmbeddedKafka(kafkaPort, dataDir);
      try {
        kafka.start();
      } catch (Exception e) {
        kafka.close();
        throw new IllegalStateException("the embedded Kafka broker could not start on port " + kafkaPort
            + " (is another Partita or Kafka using it? try --kafka-port): " + e.getMessage(), e);
      }
      services.add(kafka);
      bootstrap = kafka.bootstrapServers();
    }
    Path repo = modelRepo;
    if (repo == null) {
      repo = dataDir.resolve("models").toAbsolutePath();
      if (DemoRepository.writeTo(repo)) {
        log.info("Wrote the demo model repository to {}", repo);
      }
    }
    Map<String, String> flags = new HashMap<>();
    flags.put("kafka.bootstrap.servers", bootstrap);
    flags.put("model.repo", repo.toString());
    flags.put("http.port", Integer.toString(httpPort));
    if (grpcPort != null) {
      flags.put("gateway.grpc-port", grpcPort.toString());
    }
    flags.put("worker.threads", Integer.toString(threads));
    flags.put(CatalogPublisher.BASE_URI_KEY, baseUri);
    flags.put("gateway.id", "local");
    String hostId = WorkerConfig.defaultHostId();
    flags.put("host.id", hostId);
    // Static membership: after a crash (kill -9) the restarted planner and worker take their old
    // members' places at once instead of waiting out the dead members' session timeouts (~45 s).
    flags.put("planner.group.instance.id", "local-planner-" + hostId);
    flags.put("worker.group.instance.id", "local-worker-" + hostId);
    // One broker: the planner's changelogs and the topics it creates have one replica.
    flags.put("planner.state.dir", dataDir.resolve("planner").toAbsolutePath().toString());
    flags.put("planner.replication.factor", "1");
    flags.put("topics.replication", "1");
    // The worker starts with one slot per model version and moves to the planned slots once the
    // planner has assigned this host any (--set worker.follow-plan=false keeps the start-up slots).
    // The grouping-mode measurements the planner asks for use the start-up profiling budget, so
    // that measuring leaves the served models their cores (--set planner.measure.budget.ms=N). They
    // go out every 10 s, not the planner's default of once a minute per pool: here one pool holds every
    // demo model, asked about one model at a time, so at a minute apart the last of them stayed on a
    // prediction for minutes after start (--set planner.measure.interval.ms=N).
    // The gateway offers what the catalog holds and follows it, so a model added to or removed from
    // the repository while local runs is offered or withdrawn at the gateway once the catalog says so.
    Map<String, String> defaults = new HashMap<>(Map.of("gateway.routing", LOCAL_ROUTING.setting(), "worker.follow-plan", "true",
        "planner.measure.budget.ms", Long.toString(profileBudgetMs), "planner.measure.interval.ms", Long.toString(LOCAL_ASK_INTERVAL_MS),
        "gateway.models", "catalog"));
    if (baseUri != null) { // the catalog names files by URI: the worker fetches them into a cache and checks them
      defaults.put(WorkerConfig.CACHE_KEY, dataDir.resolve("model-cache").toAbsolutePath().toString());
    }
    Settings settings = common.settings(defaults, flags);
    Services.logSettings("local", settings);
    try {
      // The planner's Streams group starts in the background: the worker and the gateway serve from
      // the plan already in Kafka and do not wait for it (after a crash that wait was a minute).
      // The catalog comes before the profiler: a timing event for a model version that is not in
      // the catalog yet is dead-lettered.
      PlannerConfig plannerConfig = PlannerConfig.from(settings);
      startInBackground(services, new PlannerService(plannerConfig));
      // The catalog is published first (a few hundred ms): the gateway offers what it holds, and
      // would otherwise start on an empty catalog.
      CatalogSync sync = services.start(new CatalogSync(plannerConfig, repo,
          settings.longValue(CatalogSync.INTERVAL_KEY, CatalogSync.DEFAULT_INTERVAL_MS, 0, 3_600_000),
          CatalogPublisher.baseUri(
              settings.string(CatalogPublisher.BASE_URI_KEY, null))));
      log.info("Published the catalog of {} ({} records) for the planner{}", repo, sync.firstPublished(),
          sync.intervalMs() > 0 ? "; rescanned every " + sync.intervalMs() + " ms (" + CatalogSync.INTERVAL_KEY + ")" : "");
      // The worker and the gateway start side by side: neither needs the other to start, and each
      // spends most of its start waiting on the broker (group joins, reading topics to their end),
      // so after a crash the first 200 comes when the slower of the two is up, not after both.
      GatewayConfig gatewayConfig = GatewayConfig.from(settings);
      Gateway gateway = new Gateway(gatewayConfig);
      InferenceWorker worker = new InferenceWorker(WorkerConfig.from(settings));
      int warmUpCalls = settings.integer(LocalWarmUp.CALLS_KEY, LocalWarmUp.DEFAULT_CALLS, 0, 1_000_000);
      AutoCloseable warmingUp = warmUpCalls == 0 ? () -> { }
          : gateway.holdReady("partita local is warming up its serving path end to end (" + LocalWarmUp.CALLS_KEY + ")");
      services.startTogether(List.of(worker, gateway));
      new LocalWarmUp(gateway.port(), ModelRepository.scan(repo), warmUpCalls,
          Duration.ofMillis(settings.longValue(LocalWarmUp.TIME_KEY, LocalWarmUp.DEFAULT_MAX_MS, 0, 600_000)), warmingUp).start();
      if (!noProfile) {
        // Profile what is served, with a short budget, so the planner has measurements to plan
        // from. It runs in the background on the same cores as the worker and yields to serving:
        // each point waits for the slots to be idle, read from the worker in this process twice a
        // second (its status topic says it only every few seconds); --no-profile turns it off.
        ProfilerService profiler = services.start(new ProfilerService(ProfilerConfig.from(settings)));
        profiler.watchSlots(() -> worker.slots().statuses().stream().map(SlotLoad::of).toList(), LOCAL_SLOT_READING);
        ProfilerCommand.profileRepository(profiler, repo, profileBudgetMs);
      }
      System.out.printf("%nPartita is running.%n"
              + "  Kafka bootstrap:  %s%n"
              + "  HTTP (OIP v2):    http://localhost:%d/v2%n"
              + "  gRPC (OIP v2):    %s%n"
              + "  Dashboard:        http://localhost:%d/%n"
              + "  Model repository: %s%n"
              + "  Planner:          starting in the background (%s.plan.*)%n"
              + "  Routing:          %s%n"
              + "%s"
              + "Try:%n"
              + "  curl -s localhost:%d/v2/models/demo-a/infer -d '{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}'%n"
              + "Stop with Ctrl-C.%n%n",
          bootstrap, gateway.port(), gateway.grpcPort() < 0 ? "off (--grpc-port -1)" : "localhost:" + gateway.grpcPort()
              + " (inference.GRPCInferenceService)", gateway.port(), repo, plannerConfig.kafka().topicPrefix(),
          routingLine(gatewayConfig.steering().routing()),
          noProfile ? String.format("  Profiling:        off (--no-profile): a model is served once the planner has timings for it%n"
              + "                    (from an earlier run on this Kafka, or from partita profiler); until then it answers 503%n") : "",
          gateway.port());
      markServed();
    } catch (Exception e) {
      services.close();
      throw e;
    }
    return services.awaitShutdown();
  }

  /**
   * Tells {@code ./partita} that this run started everything: it keeps the class-data-sharing
   * archive the JVM writes at exit only then, so a run that failed early leaves no archive that
   * lacks most classes. Set by the script ({@code -Dpartita.cds.served=FILE}); without it, nothing.
   */
  private static void markServed() {
    String marker = System.getProperty("partita.cds.served");
    if (marker != null) {
      try {
        Files.writeString(Path.of(marker), "started\n");
      } catch (IOException e) {
        log.debug("Cannot write {} (the next start makes its class-data-sharing archive again): {}", marker, e.getMessage());
      }
    }
  }

  /**
   * Starts a service on its own thread and registers it to be stopped in order. A start that fails
   * stops everything, as a failed start in the foreground does.
   */
  private static void startInBackground(Services services, PlannerService planner) {
    services.add(planner);
    Thread starter = new Thread(() -> {
      try {
        planner.start();
      } catch (Exception e) {
        log.error("The planner did not start ({}); stopping", e.getMessage(), e);
        services.close();
      }
    }, "partita-planner-start");
    starter.setDaemon(true);
    starter.start();
  }
}

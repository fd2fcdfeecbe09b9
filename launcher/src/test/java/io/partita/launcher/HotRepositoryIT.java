package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.common.Topics;
import io.partita.common.config.Settings;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.planner.PlannerConfig;
import io.partita.planner.PlannerService;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.ProfilerService;
import io.partita.testkit.KafkaFixture;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hot add and remove on a running local stack as {@code partita local} assembles it (planner, the
 * repository's catalog kept in step by {@link CatalogSync}, a worker following the plan, a gateway
 * following the catalog): a model copied into the repository is answered without a restart, and one
 * deleted from it is refused with 404 at the gateway and its slots are closed. The figures are
 * printed; the bound is 10 s on a quiet machine ({@code -Dpartita.hot.bound.s=10}), more by default
 * for a machine shared with other builds.
 */
@ExtendWith(KafkaFixture.class)
class HotRepositoryIT {
  private static final Duration START = Duration.ofSeconds(120);
  private static final Duration BOUND = Duration.ofSeconds(Long.getLong("partita.hot.bound.s", 60));

  @TempDir Path dir;
  private final List<AutoCloseable> running = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (int i = running.size() - 1; i >= 0; i--) {
      running.get(i).close();
    }
  }

  @Test
  void shouldServeAModelAddedAndWithdrawAModelRemovedWhileRunning() throws Exception {
    Path repo = dir.resolve("models");
    ColdStartIT.writeModel(repo, 0);
    ColdStartIT.writeModel(repo, 1);
    Topics topics = new Topics(KafkaFixture.uniquePrefix("hot"));
    Settings settings = Settings.of(new TreeMap<>(Map.ofEntries(
        Map.entry("kafka.bootstrap.servers", KafkaFixture.bootstrapServers()),
        Map.entry("topic.prefix", topics.prefix()),
        Map.entry("model.repo", repo.toString()),
        Map.entry("host.id", "hot-host"),
        Map.entry("http.port", "0"),
        Map.entry("gateway.id", "hot"),
        Map.entry("gateway.routing", "plan"),
        Map.entry("gateway.models", "catalog"),
        Map.entry("worker.threads", "1"),
        Map.entry("worker.follow-plan", "true"),
        Map.entry("planner.state.dir", dir.resolve("planner").toString()),
        Map.entry("planner.replication.factor", "1"),
        Map.entry("topics.replication", "1"))));
    PlannerConfig plannerConfig = PlannerConfig.from(settings);
    start(new PlannerService(plannerConfig));
    start(new CatalogSync(plannerConfig, repo, 500));
    InferenceWorker worker = start(new InferenceWorker(WorkerConfig.from(settings)));
    Gateway gateway = start(new Gateway(GatewayConfig.from(settings)));
    start(new ProfilerService(ProfilerConfig.from(settings))); // publishes the host's cores: the default plan needs them
    String url = "http://localhost:" + gateway.port();
    HttpClient http = HttpClient.newHttpClient();
    await().atMost(START).pollInterval(Duration.ofMillis(200)).until(() ->
        ColdStartIT.infer(http, url, 0).statusCode() == 200 && ColdStartIT.infer(http, url, 1).statusCode() == 200);
    assertThat(ColdStartIT.infer(http, url, 2).statusCode()).isEqualTo(404);

    // Add m2: written aside, then moved in whole, as a copy into the repository would land
    Path aside = dir.resolve("aside");
    ColdStartIT.writeModel(aside, 2);
    long added = System.nanoTime();
    Files.move(aside.resolve("m2"), repo.resolve("m2"), StandardCopyOption.ATOMIC_MOVE);
    await().atMost(BOUND).pollInterval(Duration.ofMillis(100)).until(() -> ColdStartIT.infer(http, url, 2).statusCode() == 200);
    long addMs = (System.nanoTime() - added) / 1_000_000;
    assertThat(ColdStartIT.check(2, ColdStartIT.infer(http, url, 2).body())).isNull();

    // Remove m1: 404 at the gateway, its slots closed; m0 and m2 keep answering
    long removed = System.nanoTime();
    deleteTree(repo.resolve("m1"));
    await().atMost(BOUND).pollInterval(Duration.ofMillis(100)).until(() -> ColdStartIT.infer(http, url, 1).statusCode() == 404);
    long withdrawMs = (System.nanoTime() - removed) / 1_000_000;
    await().atMost(BOUND).pollInterval(Duration.ofMillis(100)).until(() ->
        worker.slots().slots().stream().noneMatch(s -> s.spec().model().equals("m1")));
    long slotsClosedMs = (System.nanoTime() - removed) / 1_000_000;
    System.out.printf("HotRepositoryIT: m2 added -> first 200 after %d ms; m1 removed -> 404 after %d ms, its slots closed after %d ms%n",
        addMs, withdrawMs, slotsClosedMs);

    assertThat(ColdStartIT.infer(http, url, 0).statusCode()).isEqualTo(200);
    assertThat(ColdStartIT.infer(http, url, 2).statusCode()).isEqualTo(200);
    assertThat(ColdStartIT.get(http, url + "/v2/models/m1")).isEqualTo(404);
    assertThat(worker.failure()).isNull();
  }

  private static void deleteTree(Path root) throws Exception {
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private <T extends io.partita.common.Service> T start(T service) throws Exception {
    service.start();
    running.add(service);
    return service;
  }
}

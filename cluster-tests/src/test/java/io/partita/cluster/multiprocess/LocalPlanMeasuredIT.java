package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code partita local} as a user starts it (its own JVM, the demo models it writes itself, the
 * embedded broker, the start-up profiling and the planner's loop; nothing set but ports and a data
 * directory) plans from measurements, not predictions, without anyone asking: 150 s after start
 * with no traffic, and again 150 s into a steady load on two service models of one base model,
 * every planned partition's {@code basis} (read from the dashboard's {@code plan.json}, as a user
 * would see it) is {@code measured}; under load the plan is first read after a minute of load, so
 * that what the slots served has reached the planner. Under load every call is answered 200. The
 * times at which the plan came to rest on measurements are printed.
 */
@Tag("slow")
class LocalPlanMeasuredIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration READY_WITHIN = Duration.ofSeconds(180);
  private static final Duration MEASURED_WITHIN = Duration.ofSeconds(150);
  /** How long the load runs before the plan is first read in the under-load half. */
  private static final Duration LOAD_HOLD = Duration.ofSeconds(60);
  private static final int CLIENTS = 8;
  private static final String BODY =
      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}";

  private Process local;

  @AfterEach
  void stop() throws InterruptedException {
    if (local != null) {
      local.destroy();
      if (!local.waitFor(30, TimeUnit.SECONDS)) {
        local.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void shouldRestEveryPlannedPartitionOnMeasurementsIdleAndUnderLoad() throws Exception {
    Path dir = ClusterMachine.freshDir("local-plan-measured"); // a fresh start: no plan or measurement of an earlier run
    Path log = dir.resolve("local.log");
    int http = freePort();
    long start = System.nanoTime();
    local = new ProcessBuilder(javaCommand(dir, freePortPair(), http)).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    String base = "http://localhost:" + http;
    double readyS = awaitReady(client, base, start, log);
    System.out.printf("LocalPlanMeasuredIT: ready %.1f s after start%n", readyS);

    // Idle: nothing but the start-up profiling and what the planner asks the profiler for.
    List<String> idle = awaitMeasured(client, base, start, MEASURED_WITHIN, "idle");
    assertThat(idle).as("planned partitions not resting on measurements %d s after start, with no traffic (log: %s)",
        MEASURED_WITHIN.toSeconds(), log).isEmpty();

    // Under load: the profiler yields to serving, so what serves is measured from serving.
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong answered = new AtomicLong();
    Map<Integer, Long> codes = new ConcurrentHashMap<>();
    List<Thread> clients = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      String model = c % 2 == 0 ? "demo-a" : "demo";
      Thread t = new Thread(() -> load(client, base, model, running, answered, codes), "load-" + c);
      t.setDaemon(true);
      t.start();
      clients.add(t);
    }
    long loadStart = System.nanoTime();
    List<String> loaded;
    try {
      // A fixed hold, the point of this half: the plan is read only after a minute of serving evidence has
      // reached the planner, so a plan that was measured before the load and then re-planned from what the
      // slots serve is checked as it is then, not at once (it would pass before the load changed anything).
      Thread.sleep(LOAD_HOLD.toMillis());
      loaded = awaitMeasured(client, base, loadStart, MEASURED_WITHIN, "under load");
    } finally {
      running.set(false);
      for (Thread t : clients) {
        t.join(35_000);
      }
    }
    double loadS = (System.nanoTime() - loadStart) / 1e9;
    System.out.printf("LocalPlanMeasuredIT: under load, %d clients on demo and demo-a: %d answers in %.0f s (%.0f/s), codes %s%n",
        CLIENTS, answered.get(), loadS, answered.get() / loadS, new TreeMap<>(codes));
    assertThat(loaded).as("planned partitions not resting on measurements %d s into the load (log: %s)",
        MEASURED_WITHIN.toSeconds(), log).isEmpty();
    assertThat(codes.keySet()).as("status codes under load").containsOnly(200);
    assertThat(answered.get()).as("answers under load").isPositive();
  }

  /**
   * Polls {@code plan.json} until every planned partition's basis is {@code measured}, or until
   * {@code within} after {@code fromNanos}; returns the partitions that were not (empty when all were).
   */
  private static List<String> awaitMeasured(HttpClient client, String base, long fromNanos, Duration within, String phase) {
    List<List<String>> last = new ArrayList<>(List.of(List.of("no planned partition seen")));
    Duration left = Duration.ofNanos(Math.max(0, fromNanos + within.toNanos() - System.nanoTime()));
    try {
      await().atMost(left).pollDelay(Duration.ZERO).pollInterval(Duration.ofSeconds(2)).until(() -> {
        last.set(0, notMeasured(client, base));
        return last.get(0).isEmpty();
      });
      System.out.printf("LocalPlanMeasuredIT: %s, every planned partition measured %.1f s after the phase began%n", phase,
          (System.nanoTime() - fromNanos) / 1e9);
    } catch (ConditionTimeoutException e) {
      System.out.printf("LocalPlanMeasuredIT: %s, not measured after %d s: %s%n", phase, within.toSeconds(), last.get(0));
    }
    return last.get(0);
  }

  /** Each planned partition whose basis is not {@code measured}, with its basis and why; one line if none is planned. */
  private static List<String> notMeasured(HttpClient client, String base) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(base + "/dashboard/api/plan.json"))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      return List.of("plan.json answered " + r.statusCode());
    }
    List<String> out = new ArrayList<>();
    int planned = 0;
    for (JsonNode host : JSON.readTree(r.body()).path("hosts")) {
      for (JsonNode p : host.path("partitions")) {
        if (!p.path("planned").asBoolean()) {
          continue;
        }
        planned++;
        if (!"measured".equals(p.path("basis").asText())) {
          out.add(p.path("model").asText() + "/" + p.path("version").asText() + " " + p.path("sizes") + " basis "
              + p.path("basis").asText() + ": " + p.path("why").asText());
        }
      }
    }
    return planned == 0 ? List.of("no planned partition yet") : out;
  }

  private static void load(HttpClient client, String base, String model, AtomicBoolean running, AtomicLong answered,
      Map<Integer, Long> codes) {
    HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v2/models/" + model + "/infer"))
        .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(BODY)).build();
    while (running.get()) {
      int code;
      try {
        code = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
      } catch (IOException e) {
        code = -1;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      codes.merge(code, 1L, Long::sum);
      if (code == 200) {
        answered.incrementAndGet();
      }
    }
  }

  private double awaitReady(HttpClient client, String base, long start, Path log) {
    HttpRequest ready = HttpRequest.newBuilder(URI.create(base + "/v2/health/ready")).timeout(Duration.ofSeconds(2)).build();
    await().atMost(READY_WITHIN).pollInterval(Duration.ofMillis(100)).until(() -> {
      if (!local.isAlive()) {
        throw new AssertionError("partita local ended with " + local.exitValue() + " before it was ready; see " + log);
      }
      try {
        return client.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
      } catch (IOException notYet) {
        return false; // the gateway's port is not open yet
      }
    });
    return (System.nanoTime() - start) / 1e9;
  }

  /**
   * {@code partita local} from the launcher jar the build made, as {@code ./partita local} runs it
   * ({@code java -jar}, the jar's own class path). The test JVM's class path holds test-only jars
   * besides, with which the embedded broker's process died on a native fault (exit 139).
   */
  private static List<String> javaCommand(Path dir, int kafkaPort, int httpPort) {
    String java = ProcessHandle.current().info().command().orElse("java");
    Path jar = Path.of("..", "launcher", "target", "partita-launcher.jar").toAbsolutePath().normalize();
    assertThat(jar).as("the launcher jar (built by the launcher module's package phase)").isRegularFile();
    return List.of(java, "-Xmx2g", "-jar", jar.toString(), "local",
        "--kafka-port", Integer.toString(kafkaPort), "--http-port", Integer.toString(httpPort), "--grpc-port", "-1",
        "--data-dir", dir.resolve("data").toString());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** A free port whose next one is free too: the embedded broker listens on both (clients, controller). */
  private static int freePortPair() throws IOException {
    for (int i = 0; i < 50; i++) {
      int port = freePort();
      try (ServerSocket next = new ServerSocket(port + 1)) {
        return port;
      } catch (IOException taken) {
        // try another
      }
    }
    throw new IOException("no two consecutive free ports found in 50 tries");
  }
}

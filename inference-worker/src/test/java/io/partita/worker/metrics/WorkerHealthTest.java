package io.partita.worker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.common.health.Loop;
import io.partita.common.health.Loops;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class WorkerHealthTest {
  private final Loops loops = new Loops();
  private final Loop requests = loops.register("worker-requests");
  private final Loop plan = loops.register("worker-plan");

  @Test
  void shouldBeReadyOnlyWhenEveryLoopIsReady() {
    WorkerHealth health = new WorkerHealth(loops, Optional::empty);
    assertThat(health.ready().status()).isEqualTo(503);
    assertThat(health.ready().body()).contains("worker-requests").contains("is starting");
    requests.ready();
    plan.ready();
    assertThat(health.ready().status()).isEqualTo(200);
    assertThat(health.live().status()).isEqualTo(200);
  }

  @Test
  void shouldAnswerReadiness503NamingADeadLoop() throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    WorkerMetrics metrics = new WorkerMetrics(registry);
    metrics.loop(requests);
    metrics.loop(plan);
    requests.ready();
    plan.ready();
    requests.died(new OutOfMemoryError("Java heap space"));

    try (MetricsServer server = new MetricsServer(registry, new WorkerHealth(loops, Optional::empty), 0)) {
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> ready = get(http, server, "/health/ready");
      HttpResponse<String> live = get(http, server, "/health/live");
      HttpResponse<String> scrape = get(http, server, "/metrics");

      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(ready.body()).contains("loop 'worker-requests' died: OutOfMemoryError: Java heap space");
      assertThat(live.statusCode()).isEqualTo(503);
      assertThat(live.body()).contains("worker-requests");
      assertThat(scrape.body())
          .contains("partita_worker_loop_alive{loop=\"worker-requests\"} 0.0")
          .contains("partita_worker_loop_alive{loop=\"worker-plan\"} 1.0")
          .contains("partita_worker_loop_ready{loop=\"worker-plan\"} 1.0");
    }
  }

  @Test
  void shouldNameAPartOutsideTheLoopsThatCannotServe() {
    requests.ready();
    plan.ready();
    WorkerHealth health = new WorkerHealth(loops, () -> Optional.of("slot host/s0's runner ended"));
    assertThat(health.ready().status()).isEqualTo(503);
    assertThat(health.ready().body()).contains("slot host/s0's runner ended");
    assertThat(health.live().status()).isEqualTo(200);
  }

  private static HttpResponse<String> get(HttpClient http, MetricsServer server, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + server.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}

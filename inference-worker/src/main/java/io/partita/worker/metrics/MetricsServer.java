package io.partita.worker.metrics;

import io.partita.common.metrics.MetricsEndpoint;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The worker's HTTP endpoint ({@link MetricsEndpoint} on the JDK HTTP server): {@code GET /metrics}
 * (the registry in the Prometheus text format), {@code GET /health/live} and {@code GET
 * /health/ready} (200, or 503 with the loop or part that is not; the decision is {@link
 * WorkerHealth}'s).
 */
public final class MetricsServer implements AutoCloseable {
  private final MetricsEndpoint endpoint;

  public MetricsServer(PrometheusMeterRegistry registry, int port) throws IOException {
    this(registry, null, port);
  }

  public MetricsServer(PrometheusMeterRegistry registry, WorkerHealth health, int port) throws IOException {
    endpoint = new MetricsEndpoint(registry, port, health == null ? Map.of() : Map.of(
        "/health/live", text(health::live),
        "/health/ready", text(health::ready)));
  }

  private static Supplier<MetricsEndpoint.Text> text(Supplier<WorkerHealth.Answer> answer) {
    return () -> {
      WorkerHealth.Answer a = answer.get();
      return new MetricsEndpoint.Text(a.status(), a.body());
    };
  }

  public int port() {
    return endpoint.port();
  }

  @Override
  public void close() {
    endpoint.close();
  }
}

package io.partita.worker.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * The worker's HTTP endpoint (JDK HTTP server): {@code GET /metrics} (the registry in the Prometheus
 * text format), {@code GET /health/live} and {@code GET /health/ready} (200, or 503 with the loop or
 * part that is not; the decision is {@link WorkerHealth}'s).
 */
public final class MetricsServer implements AutoCloseable {
  private final HttpServer server;

  public MetricsServer(PrometheusMeterRegistry registry, int port) throws IOException {
    this(registry, null, port);
  }

  public MetricsServer(PrometheusMeterRegistry registry, WorkerHealth health, int port) throws IOException {
    server = HttpServer.create(new InetSocketAddress(port), 0);
    server.createContext("/metrics", exchange -> serve(exchange, "text/plain; version=0.0.4; charset=utf-8",
        () -> new WorkerHealth.Answer(200, registry.scrape())));
    if (health != null) {
      server.createContext("/health/live", exchange -> serve(exchange, "text/plain; charset=utf-8", health::live));
      server.createContext("/health/ready", exchange -> serve(exchange, "text/plain; charset=utf-8", health::ready));
    }
    server.setExecutor(null);
    server.start();
  }

  private static void serve(HttpExchange exchange, String contentType, Supplier<WorkerHealth.Answer> answer) throws IOException {
    try (exchange) {
      if (!exchange.getRequestMethod().equals("GET")) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      WorkerHealth.Answer a = answer.get();
      byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", contentType);
      exchange.sendResponseHeaders(a.status(), body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

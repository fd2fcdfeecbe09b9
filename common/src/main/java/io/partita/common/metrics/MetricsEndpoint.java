package io.partita.common.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code GET /metrics}: a registry in the Prometheus text format on the JDK HTTP server, for the
 * services without another HTTP server (planner, profiler, and the worker, which adds its health
 * paths as plain-text routes). Any other method is 405.
 */
public final class MetricsEndpoint implements AutoCloseable {
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
  private static final String PLAIN_TEXT = "text/plain; charset=utf-8";

  /** A plain-text answer of an extra route: its status and body. */
  public record Text(int status, String body) {}

  private final HttpServer server;

  public MetricsEndpoint(PrometheusMeterRegistry registry, int port) throws IOException {
    this(registry, port, Map.of());
  }

  /** @param routes more {@code GET} paths, each answered in plain text by its supplier */
  public MetricsEndpoint(PrometheusMeterRegistry registry, int port, Map<String, Supplier<Text>> routes) throws IOException {
    server = HttpServer.create(new InetSocketAddress(port), 0);
    server.createContext("/metrics", exchange -> serve(exchange, PROMETHEUS_TEXT, () -> new Text(200, registry.scrape())));
    routes.forEach((path, answer) -> server.createContext(path, exchange -> serve(exchange, PLAIN_TEXT, answer)));
    server.setExecutor(null);
    server.start();
  }

  private static void serve(HttpExchange exchange, String contentType, Supplier<Text> answer) throws IOException {
    try (exchange) {
      if (!exchange.getRequestMethod().equals("GET")) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      Text text = answer.get();
      byte[] body = text.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", contentType);
      exchange.sendResponseHeaders(text.status(), body.length);
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

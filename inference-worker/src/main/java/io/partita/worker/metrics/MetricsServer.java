package io.partita.worker.metrics;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/** Serves the registry on {@code GET /metrics} in the Prometheus text format (JDK HTTP server). */
public final class MetricsServer implements AutoCloseable {
  private final HttpServer server;

  public MetricsServer(PrometheusMeterRegistry registry, int port) throws IOException {
    server = HttpServer.create(new InetSocketAddress(port), 0);
    server.createContext("/metrics", exchange -> {
      try (exchange) {
        if (!exchange.getRequestMethod().equals("GET")) {
          exchange.sendResponseHeaders(405, -1);
          return;
        }
        byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    });
    server.setExecutor(null);
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

package io.partita.gateway.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.gateway.limits.Capacity;
import java.time.Duration;
import java.util.Set;

/**
 * The gateway's metrics, for Prometheus at {@code /metrics}. All names are here:
 *
 * <ul>
 *   <li>{@code partita_gateway_requests_seconds} (timer: count, sum, max, histogram buckets), tags
 *       {@code model} (a known service model, or {@code none}), {@code endpoint} (infer, metadata,
 *       ready, jobs, server) and {@code outcome} (ok, bad_input, unauthorized, forbidden, not_found,
 *       too_large, overloaded, deadline, not_ready, error, ...);
 *   <li>{@code partita_gateway_in_flight} (gauge), tag {@code kind} = online or job;
 *   <li>{@code partita_gateway_job_items_total} (counter), tags {@code model} and {@code outcome}.
 * </ul>
 *
 * The model tag only ever takes the names of known service models, so a caller cannot grow the
 * number of series by asking for made-up models.
 */
public final class GatewayMetrics {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Set<String> models;

  public GatewayMetrics(Set<String> serviceModels, Capacity capacity) {
    this.models = Set.copyOf(serviceModels);
    Gauge.builder("partita.gateway.in.flight", capacity, Capacity::online).tag("kind", "online")
        .description("Requests waiting for a reply").register(registry);
    Gauge.builder("partita.gateway.in.flight", capacity, Capacity::jobs).tag("kind", "job")
        .description("Requests waiting for a reply").register(registry);
  }

  /**
   * Sends every request that reached the pipeline (infer calls not refused before producing, and
   * batch-job items) to {@code sink}: the gateway's demand report counts them.
   */
  public void countDemandWith(java.util.function.Consumer<String> sink) {
    this.demandSink = sink;
  }

  private volatile java.util.function.Consumer<String> demandSink = model -> {};

  /** Records one answered HTTP call. */
  public void request(String model, String endpoint, int status, long nanos) {
    if ("infer".equals(endpoint) && status != 400 && status != 401 && status != 403 && status != 404 && status != 405 && status != 413) {
      demandSink.accept(model);
    }
    Timer.builder("partita.gateway.requests")
        .description("HTTP calls answered, by service model, endpoint and outcome")
        .tag("model", tagOf(model))
        .tag("endpoint", endpoint == null ? "server" : endpoint)
        .tag("outcome", outcome(status))
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(60))
        .register(registry)
        .record(Duration.ofNanos(nanos));
  }

  /** Records one finished batch job item. */
  public void jobItem(String model, int status) {
    demandSink.accept(model);
    Counter.builder("partita.gateway.job.items").description("Batch job items finished, by outcome")
        .tag("model", tagOf(model)).tag("outcome", outcome(status)).register(registry).increment();
  }

  private String tagOf(String model) {
    return model != null && models.contains(model) ? model : "none";
  }

  /** The outcome tag of an HTTP status. */
  public static String outcome(int status) {
    return switch (status) {
      case 200, 201, 202 -> "ok";
      case 400 -> "bad_input";
      case 401 -> "unauthorized";
      case 403 -> "forbidden";
      case 404 -> "not_found";
      case 405 -> "bad_method";
      case 409 -> "conflict";
      case 413 -> "too_large";
      case 429 -> "overloaded";
      case 503 -> "not_ready";
      case 504 -> "deadline";
      default -> status >= 500 ? "error" : "other";
    };
  }

  /** The registry itself, for readers in this process (the dashboard samples the request timer). */
  public io.micrometer.core.instrument.MeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }
}

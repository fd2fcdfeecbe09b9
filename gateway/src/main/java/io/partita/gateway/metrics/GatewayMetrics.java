package io.partita.gateway.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.common.health.Loop;
import io.partita.common.health.LoopGuard;
import io.partita.gateway.health.GatewayLoops;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.refusal.Refusal.Kind;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The gateway's metrics, for Prometheus at {@code /metrics}. All names are here:
 *
 * <ul>
 *   <li>{@code partita_gateway_requests_seconds} (timer: count, sum, max, histogram buckets), tags
 *       {@code model} (a known service model, or {@code none}), {@code endpoint} (infer, metadata,
 *       ready, jobs, server) and {@code outcome} (ok, bad_input, unauthorized, forbidden, not_found,
 *       too_large, overloaded, deadline, not_ready, error, ...);
 *   <li>{@code partita_gateway_in_flight} (gauge), tag {@code kind} = online or job;
 *   <li>{@code partita_gateway_job_items_total} (counter), tags {@code model} and {@code outcome};
 *   <li>{@code partita_gateway_job_stage_seconds_total} (counter), tags {@code model} and {@code stage}
 *       (read, pack, send, slot_wait, results: the job runner's {@code JobStages}), and
 *       {@code partita_gateway_job_requests_total} and {@code partita_gateway_job_request_round_trip_seconds_total}
 *       (counters), tag {@code model}: where finished batch jobs spent their time;
 *   <li>{@code partita_gateway_online_request_calls} and {@code partita_gateway_online_request_rows}
 *       (summaries: count, sum, max), tag {@code model}: each request record that online calls went
 *       out in through the coalescer ({@code gateway.coalesce.enabled}), with the calls and the rows it
 *       carried (1 call when sent alone), so calls per record is their sums' ratio; and
 *       {@code partita_gateway_online_packs_split_total} (counter), tag {@code model}: packs answered
 *       with an error, or with outputs that could not be cut back, whose calls went again one by one;
 *   <li>{@code partita_gateway_loop_alive} and {@code partita_gateway_loop_ready} (gauges, 1 or 0),
 *       tag {@code loop}: whether each gateway loop runs, and whether it is caught up enough to serve;
 *   <li>{@code partita_gateway_loop_records_skipped_total} and {@code partita_gateway_loop_faults_total}
 *       (counters), tag {@code loop}: records a loop passed over, and failures of its own work.
 * </ul>
 *
 * The model tag only ever takes the names of known service models, so a caller cannot grow the
 * number of series by asking for made-up models.
 */
public final class GatewayMetrics {
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Supplier<? extends Set<String>> models;

  public GatewayMetrics(Set<String> serviceModels, Capacity capacity) {
    this(fixed(Set.copyOf(serviceModels)), capacity);
  }

  private static Supplier<Set<String>> fixed(Set<String> models) {
    return () -> models;
  }

  /** @param serviceModels the service models offered now (a gateway following the catalog offers what it holds) */
  public GatewayMetrics(Supplier<? extends Set<String>> serviceModels, Capacity capacity) {
    this.models = serviceModels;
    Gauge.builder("partita.gateway.in.flight", capacity, Capacity::online).tag("kind", "online")
        .description("Requests waiting for a reply").register(registry);
    Gauge.builder("partita.gateway.in.flight", capacity, Capacity::jobs).tag("kind", "job")
        .description("Requests waiting for a reply").register(registry);
  }

  /**
   * Sends every request that reached the pipeline (infer calls not refused before producing, and
   * batch-job items) to {@code sink}: the gateway's demand report counts them.
   */
  public void countDemandWith(Consumer<String> sink) {
    this.demandSink = sink;
  }

  private volatile Consumer<String> demandSink = model -> {};

  /** Exposes each loop's liveness and failure counts; call once every loop is registered. */
  public void watch(GatewayLoops loops) {
    for (LoopGuard guard : loops.guards()) {
      String name = guard.name();
      Gauge.builder("partita.gateway.loop.alive", loops, l -> alive(l, name)).tag("loop", name)
          .description("1 while the loop runs (starting, ready or not ready), 0 once it died or stopped").register(registry);
      Gauge.builder("partita.gateway.loop.ready", loops, l -> ready(l, name)).tag("loop", name)
          .description("1 while the loop is caught up enough to serve").register(registry);
      FunctionCounter.builder("partita.gateway.loop.records.skipped", guard, LoopGuard::skippedCount).tag("loop", name)
          .description("Records the loop could not handle and passed over").register(registry);
      FunctionCounter.builder("partita.gateway.loop.faults", guard, LoopGuard::faultCount).tag("loop", name)
          .description("Failures of the loop's own work (polls, reports), each tried again").register(registry);
    }
  }

  private static double alive(GatewayLoops loops, String name) {
    return loops.loops().snapshot().stream().filter(s -> s.name().equals(name))
        .anyMatch(s -> s.state() != Loop.State.DEAD && s.state() != Loop.State.STOPPED) ? 1 : 0;
  }

  private static double ready(GatewayLoops loops, String name) {
    return loops.loops().snapshot().stream().filter(s -> s.name().equals(name)).anyMatch(s -> s.state() == Loop.State.READY) ? 1 : 0;
  }

  /** Records one answered HTTP call, by the status it was answered with. */
  public void request(String model, String endpoint, int status, long nanos) {
    if ("infer".equals(endpoint) && status != 400 && status != 401 && status != 403 && status != 404 && status != 405 && status != 413
        && status != 499) {
      demandSink.accept(model);
    }
    record(model, endpoint, outcome(status), nanos);
  }

  /** Records one call answered without a refusal, whatever the transport (gRPC). */
  public void served(String model, String endpoint, long nanos) {
    if ("infer".equals(endpoint)) {
      demandSink.accept(model);
    }
    record(model, endpoint, "ok", nanos);
  }

  /** Records one refused call, whatever the transport (gRPC): its outcome is the refusal's kind. */
  public void refused(String model, String endpoint, Kind kind, long nanos) {
    if ("infer".equals(endpoint) && reachedThePipeline(kind)) {
      demandSink.accept(model);
    }
    record(model, endpoint, outcome(kind), nanos);
  }

  /**
   * Whether a call refused with this kind had been checked and reached routing, the in-flight limit
   * or a worker, so it counts as demand; one refused for its key, its model, its size or its body
   * never got that far (nor one whose client went away while it was sent).
   */
  private static boolean reachedThePipeline(Kind kind) {
    return switch (kind) {
      case BAD_INPUT, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, WRONG_METHOD, TOO_LARGE, CLIENT_GONE -> false;
      case CONFLICT, OVERLOADED, NOT_READY, DEADLINE_EXCEEDED, MODEL_ERROR, INTERNAL -> true;
    };
  }

  /**
   * The request timers by model tag, endpoint and outcome: looked up per call, so built once each (a
   * builder registered per call made its tags, its histogram's settings and its id anew every time).
   */
  private final ConcurrentHashMap<RequestKey, Timer> requestTimers = new ConcurrentHashMap<>();

  private record RequestKey(String model, String endpoint, String outcome) {}

  private void record(String model, String endpoint, String outcome, long nanos) {
    requestTimers.computeIfAbsent(new RequestKey(tagOf(model), endpoint == null ? "server" : endpoint, outcome),
        key -> Timer.builder("partita.gateway.requests")
            .description("HTTP calls answered, by service model, endpoint and outcome")
            .tag("model", key.model())
            .tag("endpoint", key.endpoint())
            .tag("outcome", key.outcome())
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofSeconds(60))
            .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** The job item counters, by model tag then outcome: looked up per row, so built once. */
  private final ConcurrentHashMap<String, ConcurrentHashMap<String, Counter>> jobItems = new ConcurrentHashMap<>();

  /** Records one batch job item answered with its outputs. */
  public void jobItem(String model) {
    jobItem(model, "ok");
  }

  /** Records one batch job item that failed: its outcome is the kind of its error. */
  public void jobItem(String model, Kind failure) {
    jobItem(model, outcome(failure));
  }

  private void jobItem(String model, String outcome) {
    demandSink.accept(model);
    String tag = tagOf(model);
    jobItems.computeIfAbsent(tag, t -> new ConcurrentHashMap<>())
        .computeIfAbsent(outcome, o -> Counter.builder("partita.gateway.job.items").description("Batch job items finished, by outcome")
            .tag("model", tag).tag("outcome", o).register(registry))
        .increment();
  }

  /**
   * Adds a finished job's stage times ({@code partita_gateway_job_stage_seconds_total}) and its request
   * records' count and summed round trips.
   *
   * @param secondsByStage seconds by stage label
   */
  public void jobStages(String model, Map<String, Double> secondsByStage, long requests, double roundTripSeconds) {
    String tag = tagOf(model);
    secondsByStage.forEach((stage, seconds) -> Counter.builder("partita.gateway.job.stage.seconds")
        .description("Time batch jobs spent in each stage of the gateway's job runner, added when a job ends")
        .tag("model", tag).tag("stage", stage).register(registry).increment(seconds));
    Counter.builder("partita.gateway.job.requests").description("Request records batch jobs sent, added when a job ends")
        .tag("model", tag).register(registry).increment(requests);
    Counter.builder("partita.gateway.job.request.round.trip.seconds")
        .description("Round trips (sent to answered) of the request records batch jobs sent, summed; added when a job ends")
        .tag("model", tag).register(registry).increment(roundTripSeconds);
  }

  /** The online request summaries and split counters, by model tag: looked up per request, so built once. */
  private final ConcurrentHashMap<String, OnlineMeters> online = new ConcurrentHashMap<>();

  private record OnlineMeters(DistributionSummary calls, DistributionSummary rows, Counter split) {}

  private OnlineMeters online(String model) {
    return online.computeIfAbsent(tagOf(model), tag -> new OnlineMeters(
        DistributionSummary.builder("partita.gateway.online.request.calls")
            .description("Online calls carried by each request record the coalescer sent (1 when sent alone)").tag("model", tag).register(registry),
        DistributionSummary.builder("partita.gateway.online.request.rows")
            .description("Rows carried by each request record the coalescer sent").tag("model", tag).register(registry),
        Counter.builder("partita.gateway.online.packs.split")
            .description("Packs of online calls sent again one call per request after an error reply or outputs that could not be cut back")
            .tag("model", tag).register(registry)));
  }

  /** Records one request record that online calls went out in: how many calls and rows it carried. */
  public void onlineRequest(String model, int calls, int rows) {
    OnlineMeters m = online(model);
    m.calls().record(calls);
    m.rows().record(rows);
  }

  /** Records one pack of online calls sent again one call per request. */
  public void onlinePackSplit(String model) {
    online(model).split().increment();
  }

  private String tagOf(String model) {
    return model != null && models.get().contains(model) ? model : "none";
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
      case 499 -> "cancelled"; // the client went away before it was answered
      case 503 -> "not_ready";
      case 504 -> "deadline";
      default -> status >= 500 ? "error" : "other";
    };
  }

  /** The outcome tag of a refusal's kind: the same tag as the HTTP status the kind is answered with. */
  public static String outcome(Kind kind) {
    return switch (kind) {
      case BAD_INPUT -> "bad_input";
      case UNAUTHORIZED -> "unauthorized";
      case FORBIDDEN -> "forbidden";
      case NOT_FOUND -> "not_found";
      case WRONG_METHOD -> "bad_method";
      case CONFLICT -> "conflict";
      case TOO_LARGE -> "too_large";
      case OVERLOADED -> "overloaded";
      case CLIENT_GONE -> "cancelled";
      case NOT_READY -> "not_ready";
      case DEADLINE_EXCEEDED -> "deadline";
      case MODEL_ERROR, INTERNAL -> "error";
    };
  }

  /** The registry itself, for readers in this process (the dashboard samples the request timer). */
  public MeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }
}

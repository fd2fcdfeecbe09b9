package io.partita.gateway;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.common.kafka.KafkaSettings;
import io.partita.gateway.auth.ApiKeys;
import io.partita.gateway.dashboard.DashboardConfig;
import io.partita.gateway.health.CatalogReadiness;
import io.partita.gateway.jobs.JobsConfig;
import io.partita.gateway.oip.JsonLimits;
import io.partita.gateway.routing.Routing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;

/**
 * The gateway's settings, built once at start, in named groups (no long positional list). Every key
 * is listed in docs/gateway.md.
 *
 * @param kafka how it reaches Kafka and encodes records ({@code kafka.*}, {@code topic.prefix}, {@code serde.*})
 * @param gatewayId names this gateway's reply topic ({@code gateway.id}, default random)
 * @param modelRepository the model repository whose service models it offers ({@code model.repo}),
 *     scanned once at start; empty: the gateway offers what the catalog topics hold and follows
 *     them while it runs (no files, no ONNX Runtime; {@code gateway.models=catalog} chooses this
 *     even when {@code model.repo} is set)
 * @param apiKeys who may call which service model ({@code gateway.api-keys}); empty = open
 * @param limits what one call may take and how many may wait
 * @param steering how requests find instances, what is reported to the planner, when it is ready
 * @param jobs the batch job settings
 * @param server the HTTP and gRPC transports' ports, timeouts and limits
 * @param dashboard the live dashboard's settings
 * @param coalesce whether and how concurrent online calls share request records
 */
public record GatewayConfig(
    KafkaSettings kafka, String gatewayId, Optional<Path> modelRepository, ApiKeys apiKeys, Limits limits, Steering steering,
    JobsConfig jobs, Server server, DashboardConfig dashboard, Coalesce coalesce) {

  /**
   * Online calls batched on the wire (docs/gateway.md, "Online calls batched on the wire"; the
   * gateway's {@code Coalescer}).
   *
   * @param enabled whether concurrent calls that can share a request are packed into one
   *     ({@code gateway.coalesce.enabled}, default true)
   * @param maxRows most rows one packed request carries ({@code gateway.coalesce.max.rows}, default 64)
   * @param windowMicros longest a call waits in an open pack for company while an earlier request of
   *     its kind is in flight ({@code gateway.coalesce.window.us}, default 500)
   */
  public record Coalesce(boolean enabled, int maxRows, long windowMicros) {}

  /**
   * What one infer call may take.
   *
   * @param timeoutMs how long an infer call waits for its reply by default ({@code gateway.timeout.ms})
   * @param maxBodyBytes largest infer request body accepted ({@code gateway.max.body.bytes})
   * @param maxInFlight requests waiting for a reply at once, online and job items together; past it
   *     an infer call is answered 429 ({@code gateway.max.in.flight})
   * @param retryAfterSeconds the {@code Retry-After} of a 429 ({@code gateway.retry.after.seconds})
   * @param json how much JSON an infer body or a job line may hold ({@code gateway.json.max.depth},
   *     {@code gateway.json.max.string.length}, {@code gateway.json.max.number.length},
   *     {@code gateway.json.max.document.bytes}; see {@link JsonLimits})
   */
  public record Limits(long timeoutMs, long maxBodyBytes, int maxInFlight, int retryAfterSeconds, JsonLimits json) {}

  /**
   * How the gateway works with the plan.
   *
   * @param routing how requests find an instance ({@code gateway.routing}: {@code plan}, the default,
   *     follows {@code <prefix>.plan.routes}; {@code any} produces to the request topic without a plan)
   * @param demandIntervalMs how often the gateway reports each service model's request rate and
   *     consumer lag to {@code <prefix>.demand} for the planner ({@code gateway.demand.interval.ms},
   *     default 10000; 0 = never)
   * @param readiness when {@code /v2/health/ready} is 200 ({@code gateway.readiness}: {@code all}, the
   *     default, every model of the catalog has a ready instance; {@code any}, at least one has)
   */
  public record Steering(Routing.Mode routing, long demandIntervalMs, CatalogReadiness.Mode readiness) {}

  /**
   * The transports (docs/gateway.md, "Connections and timeouts").
   *
   * @param httpPort HTTP port; 0 picks a free one ({@code http.port}, default 8080)
   * @param grpcPort the gRPC port ({@code gateway.grpc-port}, default 8001 as Triton; 0 picks a free
   *     one; -1 turns gRPC off); when {@code http.port} is 0 and this key is unset, it is 0 too, so
   *     tests and side-by-side gateways never collide on 8001
   * @param headerTimeoutMs a new connection must send a request's headers within this
   *     ({@code gateway.header.timeout.ms}, default 10000)
   * @param bodyTimeoutMs a request's whole body must arrive within this after its headers, else 408
   *     ({@code gateway.body.timeout.ms}, default 30000)
   * @param idleTimeoutMs a kept-alive connection with no request in progress is closed after this
   *     ({@code gateway.idle.timeout.ms}, default 60000); gRPC connections too
   * @param maxConnections most open HTTP connections, and most gRPC connections, at once
   *     ({@code gateway.max.connections}, default 10000)
   * @param handlerThreads threads that run request handlers, off the event loops
   *     ({@code gateway.handler.threads}, default max(4, 2 x cores))
   * @param serverTiming whether infer answers say where their time went in the gateway, in a
   *     {@code Server-Timing} header (HTTP) or {@code server-timing} trailer (gRPC)
   *     ({@code gateway.server.timing}, default true)
   * @param warmUpCalls infer bodies parsed and answers written before the gateway says it is ready, the JIT's
   *     warm-up of its part of a call ({@code gateway.warm-up.calls}, default 300; 0 = none; see
   *     {@link io.partita.gateway.oip.OipWarmUp})
   */
  public record Server(int httpPort, int grpcPort, long headerTimeoutMs, long bodyTimeoutMs, long idleTimeoutMs, int maxConnections,
      int handlerThreads, boolean serverTiming, int warmUpCalls) {}

  public static GatewayConfig from(Settings settings) {
    KafkaSettings kafka = KafkaSettings.from(settings);
    Optional<Path> repo = modelsFrom(settings);
    long timeoutMs = settings.longValue("gateway.timeout.ms", 30_000, 1, 3_600_000);
    String share = settings.string("gateway.jobs.share", "0.5");
    double jobShare;
    try {
      jobShare = Double.parseDouble(share);
    } catch (NumberFormatException e) {
      throw new ConfigException("gateway.jobs.share=" + share + ": not a number; give a fraction such as 0.5");
    }
    if (!(jobShare > 0 && jobShare <= 1)) {
      throw new ConfigException("gateway.jobs.share=" + share + ": must be more than 0 and at most 1");
    }
    Optional<Path> inputDir = Optional.ofNullable(settings.string("gateway.jobs.input.dir", null)).map(Path::of);
    inputDir.ifPresent(dir -> {
      if (!Files.isDirectory(dir)) {
        throw new ConfigException("gateway.jobs.input.dir=" + dir + ": not a directory; create it or leave the key unset");
      }
    });
    JobsConfig jobs = new JobsConfig(
        settings.bool("gateway.jobs.enabled", true),
        jobShare,
        inputDir,
        settings.longValue("gateway.jobs.max.body.bytes", 64L << 20, 1024, 1L << 30),
        settings.integer("gateway.jobs.max.items", 1_000_000, 1, 100_000_000),
        settings.longValue("gateway.jobs.item.timeout.ms", timeoutMs, 1, 3_600_000),
        settings.integer("gateway.jobs.retries", 4, 0, 100),
        settings.integer("gateway.jobs.pack.rows", 64, 1, 65_536));
    return new GatewayConfig(
        kafka,
        settings.string("gateway.id", "gateway-" + UUID.randomUUID().toString().substring(0, 8)),
        repo,
        ApiKeys.parse("gateway.api-keys", settings.string("gateway.api-keys", "")),
        new Limits(
            timeoutMs,
            settings.longValue("gateway.max.body.bytes", 16L << 20, 1024, 1L << 30),
            settings.integer("gateway.max.in.flight", 1024, 1, 1_000_000),
            settings.integer("gateway.retry.after.seconds", 1, 1, 3600),
            jsonLimits(settings)),
        new Steering(
            routing(settings.string("gateway.routing", Routing.Mode.PLAN.setting())),
            settings.longValue("gateway.demand.interval.ms", 10_000, 0, 3_600_000),
            CatalogReadiness.Mode.parse(settings.string("gateway.readiness", CatalogReadiness.Mode.ALL.setting()))),
        jobs,
        server(settings),
        DashboardConfig.from(settings),
        coalesce(settings));
  }

  static Coalesce coalesce(Settings settings) {
    return new Coalesce(
        settings.bool("gateway.coalesce.enabled", true),
        settings.integer("gateway.coalesce.max.rows", 64, 1, 65_536),
        settings.longValue("gateway.coalesce.window.us", 500, 1, 1_000_000));
  }

  /**
   * Where the offered models come from ({@code gateway.models}): {@code repository} (the default
   * when {@code model.repo} is set) scans {@code model.repo} at start; {@code catalog} (the default
   * without it) follows the catalog topics.
   */
  static Optional<Path> modelsFrom(Settings settings) {
    String repo = settings.string("model.repo", null);
    String from = settings.string("gateway.models", repo == null ? "catalog" : "repository").strip();
    return switch (from) {
      case "catalog" -> Optional.empty();
      case "repository" -> {
        if (repo == null) {
          throw new ConfigException("gateway.models=repository: model.repo is missing; set model.repo to the model repository"
              + " directory, or use gateway.models=catalog to serve what the catalog topics hold");
        }
        yield Optional.of(Path.of(repo));
      }
      default -> throw new ConfigException("gateway.models=" + from + ": must be 'repository' (scan model.repo at start)"
          + " or 'catalog' (follow the catalog topics, no model files needed)");
    };
  }

  static JsonLimits jsonLimits(Settings settings) {
    JsonLimits d = JsonLimits.DEFAULTS;
    return new JsonLimits(
        settings.integer(JsonLimits.DEPTH, d.maxDepth(), 8, 1000),
        settings.integer(JsonLimits.STRING, d.maxStringLength(), 256, 20_000_000),
        settings.integer(JsonLimits.NUMBER, d.maxNumberLength(), 32, 1000),
        settings.longValue(JsonLimits.DOCUMENT, d.maxDocumentBytes(), 1024, 1L << 30));
  }

  static Server server(Settings settings) {
    int httpPort = settings.integer("http.port", 8080, 0, 65535);
    boolean anyHttpPort = httpPort == 0;
    return new Server(
        httpPort,
        settings.integer("gateway.grpc-port", anyHttpPort ? 0 : 8001, -1, 65535),
        settings.longValue("gateway.header.timeout.ms", 10_000, 10, 3_600_000),
        settings.longValue("gateway.body.timeout.ms", 30_000, 10, 3_600_000),
        settings.longValue("gateway.idle.timeout.ms", 60_000, 10, 86_400_000),
        settings.integer("gateway.max.connections", 10_000, 1, 1_000_000),
        settings.integer("gateway.handler.threads", Math.max(4, Runtime.getRuntime().availableProcessors() * 2), 1, 4096),
        settings.bool("gateway.server.timing", true),
        settings.integer("gateway.warm-up.calls", 300, 0, 1_000_000));
  }

  static Routing.Mode routing(String value) {
    for (Routing.Mode mode : Routing.Mode.values()) {
      if (mode.setting().equals(value.strip())) {
        return mode;
      }
    }
    throw new ConfigException("gateway.routing=" + value + ": must be 'plan' (route by the planner's "
        + "plan.routes: only while an instance is ready, 503 otherwise) or 'any' (produce to the request topic without a plan)");
  }
}

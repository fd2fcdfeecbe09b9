package io.partita.gateway.infer;

import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import io.partita.gateway.auth.ApiKeys;
import io.partita.gateway.catalog.ModelCatalog;
import io.partita.gateway.health.Readiness;
import io.partita.gateway.kafka.RequestProducer;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import io.partita.gateway.routing.NotRoutableException;
import io.partita.gateway.routing.Routing;
import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceModelEntry;
import io.partita.models.repo.VersionEntry;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Infer calls with no transport: key checks, model and version lookup, routing, the in-flight
 * limit and the Kafka round trip, shared by the HTTP and gRPC front doors so both refuse the same
 * things with the same messages. Refusals are {@link Refusal}s: a {@link Kind} (unauthorized,
 * forbidden, not found, conflict, overloaded, not ready, deadline exceeded, or the kind of an error
 * reply) and a message, which each transport says in its own codes.
 *
 * <p>{@link #submit} registers the waiter before producing and always gives its in-flight slot
 * back; its future completes with a successful reply, or fails with a {@link Refusal} (an error
 * reply, the deadline, a request that could not be queued).
 */
public final class InferService {
  private static final Logger log = LoggerFactory.getLogger(InferService.class);

  /**
   * @param readiness whether the gateway and each model can serve, and why not: the one place
   *     readiness is decided, read by the HTTP and gRPC health endpoints alike
   * @param coalescer packs concurrent calls into shared requests ({@code gateway.coalesce.enabled}),
   *     or null: every call is its own request
   */
  public record Deps(ModelCatalog catalog, RequestProducer requests, Capacity capacity, ApiKeys keys,
      Readiness readiness, long defaultTimeoutMs, Coalescer coalescer) {}

  /** A service model and the version a call asked for ({@code pinned} null: the latest). */
  public record Resolved(ServiceModelEntry service, VersionEntry version, VersionEntry pinned) {}

  /**
   * One checked infer request.
   *
   * @param timeoutMs the deadline the caller asked for, or null for {@code gateway.timeout.ms}
   * @param traceparent W3C trace context to pass on, or null
   */
  public record Submit(String requestId, Resolved model, List<Tensor> inputs, List<String> outputs, Long timeoutMs,
      String traceparent) {}

  private final Deps deps;

  public InferService(Deps deps) {
    this.deps = deps;
  }

  /** The models offered now (it may change between two calls: see {@link ModelCatalog}). */
  public RepositoryIndex index() {
    return deps.catalog().current();
  }

  /** Refused (unauthorized or forbidden) unless {@code key} may call {@code model} (null: any model). */
  public void authorize(String key, String model) {
    ApiKeys.Decision decision = deps.keys().check(key, model);
    if (!decision.allowed()) {
      throw decision.refused();
    }
  }

  /** Whether {@code key} may call {@code model}. */
  public boolean allowed(String key, String model) {
    return deps.keys().check(key, model).allowed();
  }

  /** The service model and version, or refused (not found) naming what exists. {@code version} null or empty: the latest. */
  public Resolved resolve(String name, String version) {
    RepositoryIndex index = deps.catalog().current(); // one snapshot for the whole lookup
    ServiceModelEntry service = index.serviceModels().get(name);
    if (service == null) {
      throw Refusal.notFound("model '" + SafeText.name(name) + "' is not known; known models: " + index.serviceModels().keySet());
    }
    ModelEntry model = index.models().get(service.baseModel());
    if (version == null || version.isEmpty()) {
      return new Resolved(service, model.latest(), null);
    }
    VersionEntry entry = model.version(version).orElseThrow(() -> Refusal.notFound(
        "version '" + SafeText.name(version) + "' of model '" + service.name() + "' does not exist; versions: " + model.versions().keySet()));
    return new Resolved(service, entry, entry);
  }

  /** Whether the gateway as a whole is ready (every loop alive, the catalog served; {@link Readiness#server}). */
  public boolean ready() {
    return deps.readiness().server().ready();
  }

  /** Ready: every gateway loop is ready and (with {@code gateway.routing=plan}) the model has a ready instance. */
  public boolean modelReady(String serviceModel) {
    return deps.readiness().model(serviceModel).ready();
  }

  /** The deadline a call gets: what it asked, at most ten times {@code gateway.timeout.ms}. */
  public long timeoutMs(Long asked) {
    return asked == null ? deps.defaultTimeoutMs() : Math.min(asked, deps.defaultTimeoutMs() * 10);
  }

  /**
   * Routes, takes an in-flight slot and produces; refusals before producing are thrown (not ready,
   * overloaded, conflict). A call for a model whose planned instances are all not ready yet (a re-plan moving them
   * between slots: the route changes a moment before the worker reports the new slot) waits up to
   * {@link #ROUTE_GRACE_MS}, within its deadline, for one to become ready, instead of failing a call
   * that a moment later would be served; it is then refused (not ready) naming why, as before.
   */
  public CompletableFuture<InferenceReply> submit(Submit s) {
    return submit(s, null);
  }

  /**
   * {@link #submit(Submit)}, stamping {@code timing} (null: none) as the request is produced and as
   * its reply or failure comes back, before the returned future completes.
   */
  public CompletableFuture<InferenceReply> submit(Submit s, ServerTiming timing) {
    long timeoutMs = timeoutMs(s.timeoutMs());
    Routing routing = deps.requests().routing();
    String name = s.model().service().name();
    try {
      return produce(s, timeoutMs, routing.choose(name, pinnedVersion(s)), timing);
    } catch (NotRoutableException e) {
      long graceMs = Math.min(ROUTE_GRACE_MS, timeoutMs);
      if (graceMs <= 0 || !routing.settling(name)) {
        throw new Refusal(Kind.NOT_READY, e.getMessage());
      }
      CompletableFuture<InferenceReply> answer = new CompletableFuture<>();
      long now = System.nanoTime();
      retryRoute(s, timeoutMs, now, now + graceMs * 1_000_000L, answer, timing);
      return answer;
    }
  }

  /** The version the call is pinned to, or null. */
  static String pinnedVersion(Submit s) {
    return s.model().pinned() == null ? null : s.model().pinned().version();
  }

  /** How long a call may wait for a planned instance of its model to become ready (bounded by its deadline). */
  public static final long ROUTE_GRACE_MS = 2_000;
  private static final long ROUTE_RETRY_MS = 20;
  private static final ScheduledExecutorService ROUTE_WAITS =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "partita-route-wait");
        t.setDaemon(true);
        return t;
      });

  private void retryRoute(Submit s, long timeoutMs, long startNanos, long giveUpAtNanos, CompletableFuture<InferenceReply> answer,
      ServerTiming timing) {
    ROUTE_WAITS.schedule(() -> {
      try {
        Routing.Target target;
        try {
          target = deps.requests().routing().choose(s.model().service().name(), pinnedVersion(s));
        } catch (NotRoutableException e) {
          if (System.nanoTime() - giveUpAtNanos >= 0) {
            answer.completeExceptionally(new Refusal(Kind.NOT_READY, e.getMessage()));
          } else {
            retryRoute(s, timeoutMs, startNanos, giveUpAtNanos, answer, timing);
          }
          return;
        }
        long waitedMs = (System.nanoTime() - startNanos) / 1_000_000L; // the wait counts against the call's deadline
        produce(s, Math.max(1, timeoutMs - waitedMs), target, timing).whenComplete((reply, failure) -> {
          if (failure != null) {
            answer.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
          } else {
            answer.complete(reply);
          }
        });
      } catch (Throwable e) { // a refusal (overloaded, conflict) or anything else: this call's answer, never the scheduler's death
        answer.completeExceptionally(e);
      }
    }, ROUTE_RETRY_MS, TimeUnit.MILLISECONDS);
  }

  /**
   * Takes an in-flight slot and produces to the chosen target, through the {@link Coalescer} when
   * there is one and the call can share a request; refusals are thrown (overloaded, conflict).
   */
  private CompletableFuture<InferenceReply> produce(Submit s, long timeoutMs, Routing.Target target, ServerTiming timing) {
    if (!deps.capacity().tryOnline()) {
      throw new Refusal(Kind.OVERLOADED, "the gateway has " + deps.capacity().limit() + " requests in flight (gateway.max.in.flight); try again shortly");
    }
    InferenceRequest request = InferenceRequest.newBuilder()
        .setId(s.requestId())
        .setServiceModel(s.model().service().name())
        .setVersion(pinnedVersion(s))
        .setInputs(s.inputs())
        .setOutputs(s.outputs())
        .build();
    if (timing != null) {
      timing.producing();
    }
    if (deps.coalescer() != null) {
      CompletableFuture<InferenceReply> packed;
      try {
        packed = deps.coalescer().offer(s, request, timeoutMs, target, timing);
      } catch (IllegalStateException e) {
        deps.capacity().releaseOnline();
        throw duplicate(s.requestId());
      }
      if (packed != null) {
        return packed;
      }
    }
    CompletableFuture<InferenceReply> answer = new CompletableFuture<>();
    try {
      deps.requests().send(request, timeoutMs, s.traceparent(), target).whenComplete((reply, failure) -> {
        if (timing != null) {
          timing.replied();
        }
        deps.capacity().releaseOnline();
        if (failure != null) {
          answer.completeExceptionally(failed(failure, s.requestId(), timeoutMs));
        } else if (reply.getError() != null) {
          answer.completeExceptionally(new Refusal(Kind.of(reply.getError().getCode()), SafeText.clean(reply.getError().getMessage())));
        } else {
          answer.complete(reply);
        }
      });
      if (timing != null) {
        timing.produced();
      }
    } catch (IllegalStateException e) {
      deps.capacity().releaseOnline();
      throw duplicate(s.requestId());
    }
    return answer;
  }

  static Refusal failed(Throwable failure, String requestId, long timeoutMs) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof TimeoutException) {
      return new Refusal(Kind.DEADLINE_EXCEEDED, "no reply before the deadline (" + timeoutMs + " ms); the request may still run");
    }
    if (cause instanceof IllegalStateException && cause.getMessage() != null && cause.getMessage().contains("already in flight")) {
      return duplicate(requestId);
    }
    log.warn("Request {} could not be produced: {}", requestId, cause.toString());
    return new Refusal(Kind.NOT_READY, "the request could not be queued: " + cause.getClass().getSimpleName());
  }

  private static Refusal duplicate(String requestId) {
    return new Refusal(Kind.CONFLICT, "a request with X-Request-Id " + requestId + " is already in flight; use a new id");
  }
}

package io.partita.launcher;

import io.partita.launcher.cluster.InferBodies;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.RepositoryIndex;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code partita local}'s warm-up of its whole serving path before its gateway says ready: HTTP
 * infer calls through the gateway's own port, the broker, the worker's loop and slots and back,
 * from {@link #CLIENTS} clients, the offered service models in turn, until {@code calls} were
 * answered or {@code maxTime} passed since the first. On two cores the JIT compiles the Kafka client and broker,
 * the HTTP server and the worker's paths for a minute or more under the first load; the slots'
 * and the gateway's own warm-ups ({@code worker.warm-up.requests}, {@code gateway.warm-up.calls})
 * cover only their parts, so without this the first minute after ready ran at a fraction of the
 * steady rate (BENCHMARKS.md, "partita local as started").
 *
 * <p>It starts once a model is routable ({@code /v2/models/{m}/ready} says 200): the server's
 * readiness is held meanwhile ({@code Gateway#holdReady}), a model's is not, so these calls, and a
 * client's, are served. It never fails the start: calls answered with an error are counted and
 * logged, and the hold is released when the time is up whatever happened.
 */
final class LocalWarmUp implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(LocalWarmUp.class);
  static final String CALLS_KEY = "local.warm-up.calls";
  static final String TIME_KEY = "local.warm-up.max.ms";
  static final int DEFAULT_CALLS = 4000;
  static final long DEFAULT_MAX_MS = 30_000;
  /** Clients at once: as many as the first-minute measurement drives (BENCHMARKS.md). */
  static final int CLIENTS = 16;
  /** How long it waits for a routable model before it gives up and releases the gateway's readiness. */
  static final Duration ROUTABLE_WITHIN = Duration.ofMinutes(5);

  private final String base;
  private final Map<String, String> bodies;
  private final int calls;
  private final Duration maxTime;
  private final AutoCloseable hold;

  /**
   * @param index the served repository: a JSON body for each service model whose inputs can be written
   * @param hold released when the warm-up ends
   */
  LocalWarmUp(int httpPort, RepositoryIndex index, int calls, Duration maxTime, AutoCloseable hold) {
    this.base = "http://localhost:" + httpPort;
    this.calls = calls;
    this.maxTime = maxTime;
    this.hold = hold;
    Map<String, String> out = new TreeMap<>();
    index.serviceModels().values().forEach(sm -> index.model(sm.baseModel()).ifPresent(m -> {
      try {
        out.put(sm.name(), InferBodies.json(m.signature(), 1, Map.of(), sm.name().hashCode()));
      } catch (IllegalArgumentException | ArithmeticException cannotWrite) {
        log.debug("Service model {} is left out of the warm-up: {}", sm.name(), cannotWrite.getMessage());
      }
    }));
    this.bodies = out;
  }

  /** Starts it on a daemon thread. */
  void start() {
    Thread t = new Thread(this, "partita-local-warm-up");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void run() {
    AtomicInteger answered = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    try {
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
      List<String> models = List.copyOf(bodies.keySet());
      if (calls <= 0 || models.isEmpty() || !awaitRoutable(http, models, System.nanoTime() + ROUTABLE_WITHIN.toNanos())) {
        return;
      }
      long from = System.nanoTime();
      long deadline = from + maxTime.toNanos();
      AtomicInteger next = new AtomicInteger();
      List<Thread> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        Thread t = new Thread(() -> {
          for (int i = next.getAndIncrement(); i < calls && System.nanoTime() < deadline; i = next.getAndIncrement()) {
            String model = models.get(i % models.size());
            try {
              int status = http.send(HttpRequest.newBuilder(URI.create(base + "/v2/models/" + model + "/infer"))
                  .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(bodies.get(model))).build(),
                  HttpResponse.BodyHandlers.discarding()).statusCode();
              (status == 200 ? answered : failed).incrementAndGet();
            } catch (IOException e) {
              failed.incrementAndGet();
            } catch (InterruptedException e) {
              return;
            }
          }
        }, "partita-local-warm-up-" + c);
        t.setDaemon(true);
        clients.add(t);
        t.start();
      }
      for (Thread t : clients) {
        t.join();
      }
      log.info("Warmed up the serving path end to end before saying ready: {} infer calls answered ({} failed) in {} ms ({}, {})",
          answered.get(), failed.get(), (System.nanoTime() - from) / 1_000_000, CALLS_KEY, TIME_KEY);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        hold.close();
      } catch (Exception e) {
        log.warn("Releasing the gateway's readiness failed: {}", e.toString());
      }
    }
  }

  /** Waits until one of the models is routable; false when the time is up first. */
  private boolean awaitRoutable(HttpClient http, List<String> models, long deadline) throws InterruptedException {
    while (System.nanoTime() < deadline) {
      for (String model : models) {
        try {
          if (http.send(HttpRequest.newBuilder(URI.create(base + "/v2/models/" + model + "/ready")).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
            return true;
          }
        } catch (IOException notYet) {
          // the port is not open yet
        }
      }
      TimeUnit.MILLISECONDS.sleep(100); // polling the model's readiness, as a client's probe does
    }
    log.warn("No model became routable within {} s; saying ready without the end-to-end warm-up", ROUTABLE_WITHIN.toSeconds());
    return false;
  }
}

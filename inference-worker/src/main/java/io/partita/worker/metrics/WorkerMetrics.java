package io.partita.worker.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.partita.common.health.Loop;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * The worker's metrics, and the one place their names and tags are spelled. Timers and the batch
 * size publish histograms (Prometheus {@code _bucket} series), tagged by service model and slot;
 * replies are counted by service model and outcome ({@code OK} or the error code, or {@code
 * DEAD_LETTER}).
 */
public final class WorkerMetrics {
  /** Time a request waited in its slot's queue, from being read to its batch starting. */
  public static final String QUEUE_WAIT = "partita.worker.queue.wait";
  /** Time one batch took in ONNX Runtime. */
  public static final String INFERENCE = "partita.worker.inference";
  /** Requests per batch. */
  public static final String BATCH_SIZE = "partita.worker.batch.size";
  /** Answers written, by outcome. */
  public static final String REPLIES = "partita.worker.replies";
  /** Requests waiting in a slot's queue. */
  public static final String QUEUE_DEPTH = "partita.worker.queue.depth";
  /** Requests in the batch a slot is running. */
  public static final String IN_FLIGHT = "partita.worker.in.flight";
  /** Weight files unmounted to stay within a memory budget. */
  public static final String EVICTIONS = "partita.worker.weights.evictions";

  /** Replies the broker refused for the record's own reason (too large, no such or forbidden topic), dead-lettered. */
  public static final String REFUSED_REPLIES = "partita.worker.replies.refused";
  /** Sends retried after an infrastructure fault (broker unreachable, fenced). */
  public static final String SEND_RETRIES = "partita.worker.send.retries";
  /** 1 while a loop is alive (running, ready or not), 0 once it died or stopped. */
  public static final String LOOP_ALIVE = "partita.worker.loop.alive";
  /** 1 while a loop is ready to serve. */
  public static final String LOOP_READY = "partita.worker.loop.ready";
  /** Seconds of the host's CPU budget one item costs beyond the engine's run (see {@code balance/ServingCost}). */
  public static final String ITEM_OVERHEAD = "partita.worker.item.overhead";

  public static final String TAG_SERVICE_MODEL = "service_model";
  public static final String TAG_LOOP = "loop";
  public static final String TAG_REASON = "reason";
  public static final String TAG_SLOT = "slot";
  public static final String TAG_OUTCOME = "outcome";

  private final MeterRegistry registry;
  private final ByTags<Timer> queueWaits;
  private final ByTags<Timer> inferences;
  private final ByTags<DistributionSummary> batchSizes;
  private final ByTags<Counter> replies;
  private final ByTags<Counter> refusedReplies;
  private final ByTags<Counter> sendRetries;
  private final LongAdder itemsRun = new LongAdder();
  private final LongAdder engineNanos = new LongAdder();

  /**
   * One meter name's meters by two tag values, made on first use. Found with two string lookups and
   * no allocation after that: the worker looks meters up for every request and batch.
   */
  private static final class ByTags<M> {
    private final Map<String, Map<String, M>> byFirst = new ConcurrentHashMap<>();
    private final BiFunction<String, String, M> make;

    ByTags(BiFunction<String, String, M> make) {
      this.make = make;
    }

    M get(String first, String second) {
      Map<String, M> bySecond = byFirst.get(first);
      if (bySecond == null) {
        bySecond = byFirst.computeIfAbsent(first, f -> new ConcurrentHashMap<>());
      }
      M meter = bySecond.get(second);
      return meter != null ? meter : bySecond.computeIfAbsent(second, s -> make.apply(first, s));
    }
  }

  public WorkerMetrics(MeterRegistry registry) {
    this.registry = registry;
    queueWaits = new ByTags<>((serviceModel, slot) -> timer(QUEUE_WAIT, serviceModel, slot));
    inferences = new ByTags<>((serviceModel, slot) -> timer(INFERENCE, serviceModel, slot));
    batchSizes = new ByTags<>((serviceModel, slot) -> DistributionSummary.builder(BATCH_SIZE)
        .description("Requests per batch")
        .baseUnit("requests")
        .tag(TAG_SERVICE_MODEL, serviceModel)
        .tag(TAG_SLOT, slot)
        .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
        .register(registry));
    replies = new ByTags<>((serviceModel, outcome) -> Counter.builder(REPLIES)
        .description("Answers written, by outcome")
        .tag(TAG_SERVICE_MODEL, serviceModel)
        .tag(TAG_OUTCOME, outcome)
        .register(registry));
    refusedReplies = new ByTags<>((serviceModel, reason) -> Counter.builder(REFUSED_REPLIES)
        .description("Replies the broker refused for the record's own reason; the request was dead-lettered")
        .tag(TAG_SERVICE_MODEL, serviceModel)
        .tag(TAG_REASON, reason)
        .register(registry));
    sendRetries = new ByTags<>((reason, none) -> Counter.builder(SEND_RETRIES)
        .description("Sends retried after an infrastructure fault")
        .tag(TAG_REASON, reason)
        .register(registry));
  }

  public MeterRegistry registry() {
    return registry;
  }

  public void queueWait(String serviceModel, String slot, long nanos) {
    queueWaits.get(serviceModel, slot).record(Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }

  public void inference(String serviceModel, String slot, long nanos) {
    inferences.get(serviceModel, slot).record(Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }

  /** A run that answered {@code items} items (rows) with results and took {@code nanos} of CPU in the engine. */
  public void ran(int items, long nanos) {
    itemsRun.add(items);
    engineNanos.add(Math.max(0, nanos));
  }

  /** Items (rows) the slots ran with results since the worker started. */
  public long itemsRun() {
    return itemsRun.sum();
  }

  /** The engine's CPU time in those runs, nanoseconds. */
  public long engineNanos() {
    return engineNanos.sum();
  }

  /** Publishes what an item costs beyond its run, seconds of the host's CPU budget (NaN while not known). */
  public void itemOverhead(DoubleSupplier seconds) {
    Gauge.builder(ITEM_OVERHEAD, seconds, DoubleSupplier::getAsDouble)
        .description("Seconds of the host's CPU budget one item costs beyond the engine's run")
        .baseUnit("seconds")
        .strongReference(true) // the supplier is held by nothing else
        .register(registry);
  }

  public void batch(String serviceModel, String slot, int requests) {
    batchSizes.get(serviceModel, slot).record(requests);
  }

  /** A reply refused by the broker for the record's own reason ({@code reason}: the broker's error class). */
  public void refusedReply(String serviceModel, String reason) {
    refusedReplies.get(serviceModel, reason).increment();
  }

  public void sendRetry(String reason) {
    sendRetries.get(reason, "").increment();
  }

  /** Gauges of one loop's liveness and readiness (1 or 0). */
  public void loop(Loop loop) {
    Gauge.builder(LOOP_ALIVE, loop, l -> alive(l) ? 1 : 0)
        .description("1 while the loop runs, 0 once it died or stopped")
        .tag(TAG_LOOP, loop.name())
        .register(registry);
    Gauge.builder(LOOP_READY, loop, l -> l.isReady() ? 1 : 0)
        .description("1 while the loop is ready to serve")
        .tag(TAG_LOOP, loop.name())
        .register(registry);
  }

  private static boolean alive(Loop loop) {
    Loop.State state = loop.snapshot().state();
    return state != Loop.State.DEAD && state != Loop.State.STOPPED;
  }

  public void reply(String serviceModel, String outcome) {
    replies.get(serviceModel, outcome).increment();
  }

  /** Registers a slot's queue depth, in-flight and eviction gauges. */
  public List<Meter> slot(String slot, Supplier<Number> queueDepth, Supplier<Number> inFlight, Supplier<Number> evictions) {
    return List.of(
        Gauge.builder(QUEUE_DEPTH, queueDepth).tag(TAG_SLOT, slot).register(registry),
        Gauge.builder(IN_FLIGHT, inFlight).tag(TAG_SLOT, slot).register(registry),
        Gauge.builder(EVICTIONS, evictions).tag(TAG_SLOT, slot).register(registry));
  }

  /** Removes a closed slot's gauges, so a new slot with the same id reports its own values. */
  public void removeSlot(List<Meter> gauges) {
    gauges.forEach(registry::remove);
  }

  private Timer timer(String name, String serviceModel, String slot) {
    return Timer.builder(name)
        .tag(TAG_SERVICE_MODEL, serviceModel)
        .tag(TAG_SLOT, slot)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofNanos(20_000))
        .maximumExpectedValue(Duration.ofSeconds(30))
        .register(registry);
  }
}

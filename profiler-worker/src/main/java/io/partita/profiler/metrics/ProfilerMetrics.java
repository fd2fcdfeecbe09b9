package io.partita.profiler.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.partita.profiler.idle.IdleGate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The profiler's metrics, and the one place their names and tags are spelled (Prometheus turns the
 * dots into underscores and adds {@code _total} / {@code _seconds}):
 *
 * <ul>
 *   <li>{@value #REQUESTED}, {@value #DONE}, {@value #FAILED} (counters) and {@value #OUTSTANDING}
 *       (gauge): profile requests for this host taken for measuring (from
 *       {@code profile.requests} or {@code profileNow}), those that ended DONE, those that ended
 *       FAILED (an unknown model, an interrupted run), and those queued or running;
 *   <li>{@value #STEP} (timer, tags {@code kind} = point | grouping, {@code ok}): time per measured
 *       point or grouping, warm-up and memory child included;
 *   <li>{@value #TIMINGS} (counter, tag {@code condition}): timing events the broker acknowledged,
 *       by the condition they were measured under;
 *   <li>{@value #DEAD_LETTERS} (counter): requests dead-lettered (undecodable or invalid),
 *       acknowledged;
 *   <li>{@value #IDLE_WAIT} (timer, tag {@code condition}): the wait for idle slots before each
 *       step: its count is the steps checked, its total the time waited, by what the wait ended
 *       in (IDLE, NO_SERVING, BUSY_AFTER_WAIT, UNCHECKED).
 * </ul>
 *
 * Recording never throws.
 */
public final class ProfilerMetrics {
  public static final String REQUESTED = "partita.profiler.measurements.requested";
  public static final String DONE = "partita.profiler.measurements.done";
  public static final String FAILED = "partita.profiler.measurements.failed";
  public static final String OUTSTANDING = "partita.profiler.measurements.outstanding";
  public static final String STEP = "partita.profiler.step";
  public static final String TIMINGS = "partita.profiler.timings.published";
  public static final String DEAD_LETTERS = "partita.profiler.dead.letters";
  public static final String IDLE_WAIT = "partita.profiler.idle.wait";

  private final MeterRegistry registry;
  private final Counter requested;
  private final Counter done;
  private final Counter failed;
  private final Counter deadLetters;
  private final AtomicInteger outstanding = new AtomicInteger();
  private final Map<List<String>, Object> meters = new ConcurrentHashMap<>();

  public ProfilerMetrics(MeterRegistry registry) {
    this.registry = registry;
    requested = Counter.builder(REQUESTED).description("Profile requests taken for measuring").register(registry);
    done = Counter.builder(DONE).description("Profile requests measured to the end").register(registry);
    failed = Counter.builder(FAILED).description("Profile requests that ended FAILED").register(registry);
    deadLetters = Counter.builder(DEAD_LETTERS).description("Profile requests dead-lettered").register(registry);
    Gauge.builder(OUTSTANDING, outstanding, AtomicInteger::get)
        .description("Profile requests queued or being measured").register(registry);
  }

  /** Metrics kept in memory only (the command line, tests). */
  public static ProfilerMetrics inMemory() {
    return new ProfilerMetrics(new SimpleMeterRegistry());
  }

  public MeterRegistry registry() {
    return registry;
  }

  public void requested() {
    requested.increment();
    outstanding.incrementAndGet();
  }

  /** A request taken with {@link #requested()} ended; {@code ok} = DONE, else FAILED. */
  public void finished(boolean ok) {
    (ok ? done : failed).increment();
    outstanding.decrementAndGet();
  }

  public void step(String kind, boolean ok, long nanos) {
    timer(STEP, "kind", kind, "ok", Boolean.toString(ok)).record(Duration.ofNanos(nanos));
  }

  public void timingPublished(String condition) {
    counter(TIMINGS, "condition", condition).increment();
  }

  public void deadLettered() {
    deadLetters.increment();
  }

  public void idleWait(IdleGate.Decision decision) {
    timer(IDLE_WAIT, "condition", decision.condition().name()).record(Duration.ofMillis(decision.waitedMillis()));
  }

  private Counter counter(String name, String tag, String value) {
    return (Counter) meters.computeIfAbsent(List.of(name, tag, value),
        k -> Counter.builder(name).tag(tag, value).register(registry));
  }

  private Timer timer(String name, String... tags) {
    List<String> key = new ArrayList<>(List.of(name));
    key.addAll(List.of(tags));
    return (Timer) meters.computeIfAbsent(key, k -> Timer.builder(name).tags(tags).register(registry));
  }
}

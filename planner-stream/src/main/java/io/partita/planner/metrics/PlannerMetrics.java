package io.partita.planner.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The planner's metrics, and the one place their names and tags are spelled (Prometheus turns the
 * dots into underscores and adds {@code _total} / {@code _seconds}):
 *
 * <ul>
 *   <li>{@value #PLAN_RECORDS} (counter, tag {@code table}): plan records written; its rate is plans
 *       per second;
 *   <li>{@value #PASS} (timer): time per planning pass;
 *   <li>{@value #STAGE} (timer, tag {@code stage}): time per stage of a pass ({@code inputs},
 *       {@code versions}, {@code mappings}, {@code partitions}, {@code assignments}, {@code routes},
 *       {@code asks}), to see which method dominates;
 *   <li>{@value #DEAD_LETTERS} (counter, tag {@code input}): input records dead-lettered;
 *   <li>{@value #CHOICES} (counter, tag {@code basis}): partition plans written, by what their choice
 *       rests on ({@code measured}, {@code predicted});
 *   <li>{@value #MEASURED_OVER_PREDICTED} (gauge per partition key, tags {@code model},
 *       {@code version}, {@code host}, {@code pool}): the chosen grouping's grouping-mode measurement
 *       over its prediction, while the live plan has one;
 *   <li>{@value #REQUESTED}, {@value #ANSWERED} (counters) and {@value #OUTSTANDING} (gauge):
 *       grouping-mode measurements the planner asked for, answers received (one per grouping), and
 *       host/pools with a request outstanding;
 *   <li>{@value #SERVING_MEASUREMENTS} (counter): grouping-mode measurements the planner recorded from
 *       the serving slots' evidence.
 * </ul>
 *
 * Recording never throws and never blocks the stream thread.
 */
public final class PlannerMetrics {
  public static final String PLAN_RECORDS = "partita.planner.plan.records";
  public static final String PASS = "partita.planner.pass";
  public static final String STAGE = "partita.planner.stage";
  /** The stages of a pass, in order, as {@value #STAGE}'s {@code stage} tag spells them. */
  public static final List<String> STAGES =
      List.of("inputs", "versions", "mappings", "partitions", "serving", "assignments", "routes", "asks");
  public static final String DEAD_LETTERS = "partita.planner.dead.letters";
  public static final String CHOICES = "partita.planner.choices";
  public static final String MEASURED_OVER_PREDICTED = "partita.planner.choice.measured.over.predicted";
  public static final String REQUESTED = "partita.planner.measurements.requested";
  public static final String ANSWERED = "partita.planner.measurements.answered";
  public static final String OUTSTANDING = "partita.planner.measurements.outstanding";
  public static final String SERVING_MEASUREMENTS = "partita.planner.measurements.from.serving";

  private final MeterRegistry registry;
  private final Timer pass;
  private final Counter requested;
  private final Counter answered;
  private final Counter fromServing;
  private final AtomicInteger outstanding = new AtomicInteger();
  private final Map<List<String>, Counter> counters = new ConcurrentHashMap<>();
  private final Map<String, Ratio> ratios = new ConcurrentHashMap<>();
  private final Map<String, Timer> stages = new ConcurrentHashMap<>();

  public PlannerMetrics(MeterRegistry registry) {
    this.registry = registry;
    pass = Timer.builder(PASS).description("Time per planning pass").register(registry);
    requested = Counter.builder(REQUESTED).description("Grouping-mode measurement requests sent").register(registry);
    answered = Counter.builder(ANSWERED).description("Groupings of the planner's requests answered").register(registry);
    fromServing = Counter.builder(SERVING_MEASUREMENTS)
        .description("Grouping-mode measurements recorded from the serving slots' evidence").register(registry);
    Gauge.builder(OUTSTANDING, outstanding, AtomicInteger::get)
        .description("Host/pools with a measurement request outstanding").register(registry);
  }

  /** Metrics kept in memory only (tests, replay). */
  public static PlannerMetrics inMemory() {
    return new PlannerMetrics(new SimpleMeterRegistry());
  }

  public MeterRegistry registry() {
    return registry;
  }

  public Timer pass() {
    return pass;
  }

  /** The timer of one stage of a pass (one of {@link #STAGES}). */
  public Timer stage(String stage) {
    return stages.computeIfAbsent(stage, s -> Timer.builder(STAGE).description("Time per stage of a planning pass")
        .tag("stage", s).register(registry));
  }

  public void planRecord(String table) {
    counter(PLAN_RECORDS, "table", table).increment();
  }

  public void deadLetter(String input) {
    counter(DEAD_LETTERS, "input", input).increment();
  }

  public void choice(String basis) {
    counter(CHOICES, "basis", basis).increment();
  }

  public void requested() {
    requested.increment();
  }

  public void answered() {
    answered.increment();
  }

  public void servingMeasurement() {
    fromServing.increment();
  }

  public void outstanding(int hostPools) {
    outstanding.set(hostPools);
  }

  /** The live choice of a partition key measured at {@code ratio} of its prediction; null removes it. */
  public void measuredOverPredicted(String model, String version, String host, String pool, Double ratio) {
    String key = model + "/" + version + "/" + host + "/" + pool;
    if (ratio == null) {
      Ratio gone = ratios.remove(key);
      if (gone != null) {
        registry.remove(gone.gauge);
      }
      return;
    }
    ratios.computeIfAbsent(key, k -> {
      Ratio r = new Ratio();
      r.gauge = Gauge.builder(MEASURED_OVER_PREDICTED, r, x -> x.value)
          .description("Chosen grouping: grouping-mode measurement over prediction")
          .tags("model", model, "version", version, "host", host, "pool", pool).register(registry);
      return r;
    }).value = ratio;
  }

  private Counter counter(String name, String tag, String value) {
    return counters.computeIfAbsent(List.of(name, value), k -> Counter.builder(name).tag(tag, value).register(registry));
  }

  private static final class Ratio {
    volatile double value;
    Gauge gauge;
  }
}

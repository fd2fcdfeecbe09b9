package io.partita.worker.balance;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.OptionalDouble;

/**
 * What serving one item costs this worker beyond the engine's run, as time of the host's CPU budget.
 *
 * <p>The plan sizes a slot by the engine alone (the profiler times ONNX Runtime's runs). For a light
 * model that is far from what the slot serves: decoding the request, encoding and producing the
 * reply, the Kafka clients' own threads and committing cost the worker hundreds of times the run of
 * a model that takes microseconds, and all of it comes out of the same CPU budget. Sharing the
 * partitions by the engine's speed then follows a ratio no host achieves.
 *
 * <p>So the worker samples, with every status, its process's CPU time, the items its slots ran and
 * the CPU their runs took (the runner thread's CPU in the run call: under a quota the run's wall
 * time also holds the time it was throttled), and the host's CPU budget (cores: the cgroup quota,
 * at most the CPUs it may use; read each time, so a host slowed at run time reads its new budget).
 * Over the last {@link
 * #WINDOW_MS} the CPU not spent in runs, per item, divided by the budget, is the <em>overhead</em>:
 * the wall time an item takes of a host that does nothing else. The worker publishes it in its
 * slots' serving evidence, and the planner counts it in each slot's capacity (planner-core's {@code
 * ServingRate.withOverhead}), by which the request partitions are shared. The overhead is read only
 * from a window that ran at least {@link #MIN_ITEMS} items over at least {@link #MIN_SPAN_MS}: an
 * idle worker's background work would read as a large cost per item. Until then, and after the
 * worker idled a whole window, the last CPU per item read stands, over the budget of the moment.
 *
 * <p>Pure: the samples are passed in. Not thread-safe: the caller serialises samples and reads.
 */
public final class ServingCost {
  /** How far back the overhead looks. */
  public static final long WINDOW_MS = 30_000;
  /** The fewest items a window must hold to be read. */
  static final long MIN_ITEMS = 100;
  /** The shortest span a window must cover to be read. */
  static final long MIN_SPAN_MS = 5_000;
  /** Samples closer than this to the last are not kept. */
  static final long MIN_GAP_MS = 500;

  /** Cumulative counters at one moment. */
  private record Sample(long atMs, long cpuNanos, long items, long engineNanos) {}

  private final Deque<Sample> samples = new ArrayDeque<>();
  private double budgetCores = Double.NaN;
  /** CPU seconds per item beyond the run, from the last window that held enough items; NaN before one did. */
  private double cpuPerItem = Double.NaN;

  /**
   * The worker's counters at {@code nowMs}, each cumulative since it started.
   *
   * @param cpuNanos the process's CPU time
   * @param items items (rows) its slots ran
   * @param engineNanos CPU time those runs took in the engine
   * @param budgetCores the CPU the host may use now, in cores (positive)
   */
  public void sample(long nowMs, long cpuNanos, long items, long engineNanos, double budgetCores) {
    if (!(budgetCores > 0)) {
      throw new IllegalArgumentException("budgetCores: must be positive, was " + budgetCores);
    }
    this.budgetCores = budgetCores;
    Sample last = samples.peekLast();
    if (last != null && (nowMs - last.atMs < MIN_GAP_MS && nowMs >= last.atMs)) {
      return;
    }
    if (last != null && (nowMs < last.atMs || cpuNanos < last.cpuNanos || items < last.items)) {
      samples.clear(); // the clock stepped back or a counter restarted: begin the window again
    }
    samples.addLast(new Sample(nowMs, cpuNanos, items, engineNanos));
    while (samples.size() > 2 && samples.peekFirst().atMs < nowMs - WINDOW_MS) {
      samples.removeFirst();
    }
    Sample first = samples.peekFirst();
    long ran = items - first.items;
    if (ran >= MIN_ITEMS && nowMs - first.atMs >= MIN_SPAN_MS) {
      long cpu = cpuNanos - first.cpuNanos;
      long engine = engineNanos - first.engineNanos;
      cpuPerItem = Math.max(0, cpu - engine) / 1e9 / ran;
    }
  }

  /**
   * Seconds of the host's budget one item costs beyond its run: the CPU per item of the last window
   * that held enough items over the budget of the last sample, so a host slowed or restored while
   * it serves little (its share taken away) reads its new budget at once; empty before a window
   * held enough items.
   */
  public OptionalDouble overheadSeconds() {
    return Double.isNaN(cpuPerItem) ? OptionalDouble.empty() : OptionalDouble.of(cpuPerItem / budgetCores);
  }

  /** The budget of the last sample, in cores; NaN before the first. */
  public double budgetCores() {
    return budgetCores;
  }
}

package io.partita.planning.grouping;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SortedMap;

/**
 * What serving says about a slot and about the grouping it belongs to, compared like with like
 * with the profile the plan was made from. Pure: figures in, figures out.
 *
 * <ul>
 *   <li><b>Profile time of a run.</b> A run of {@code b} items on a partition of size {@code k} is
 *       expected to take {@code T_k(b)}, from the single-size points of {@code k} measured at the
 *       batch sizes {@code B} (the plan's provider; under a CPU quota the sustainable time the plan
 *       uses): a measured {@code b} takes its time; between two measured sizes, linear; below the
 *       smallest, the smallest's time; above the largest, {@code T_k(b_max) * b / b_max}. Both ends
 *       err toward a longer expected time, so a missing point never makes a slot look slower than it
 *       is.
 *   <li><b>Speed of a slot</b> over a window: {@code s = sum over runs of T_k(b_run) / busy}: 1 when
 *       it served as profiled, 0.1 when its runs took ten times as long (a host whose CPU was cut).
 *       Comparing the time the runs took with the time the profile gives for the same runs makes a
 *       slot that served batches of 1 comparable with a plan made at batch 32.
 *   <li><b>Observed rate</b> of a slot at the plan's batch {@code b}: {@code s * b * 1000 / T_k(b)}
 *       (the plan's lone-partition figure, at the speed served).
 *   <li><b>Weight</b> of a window, by the traffic it covers: {@code w = min(1, max(busy / full.busyMs,
 *       items / full.items))}. Little traffic weighs little; a window with {@code full.busyMs} of
 *       runs, or {@code full.items} items, carries full weight.
 *   <li><b>Grouping</b>: the observed rates of its slots summed, {@code sum_i s_i * b * 1000 /
 *       T_{k_i}(b)}; a slot that ran nothing in the window takes the pooled speed of the others
 *       ({@code sum expected / sum busy}). Its weight is the window's over all its slots' runs. It is
 *       the grouping at the load it served: partitions that ran at the same time slowed each other
 *       as they did.
 *   <li><b>Recorded figure</b> ({@link #update}): with no measurement of the grouping yet, a window
 *       of full weight gives its observed figure; with one ({@code m}), the window moves it by its
 *       weight, {@code m + w * (observed - m)}, and is recorded only when that moves {@code m} by
 *       more than the margin.
 *   <li><b>Recovery</b> ({@link #recover}): a serving figure below the grouping's idle figure
 *       {@code r} by more than the margin is only lowered by traffic, and a slot whose share the
 *       cut took away serves none. So a window after the figure with no runs at all moves it half
 *       way back to {@code r} (we know nothing newer than the idle figure; if the slots are still
 *       slow, the share this gives back brings the evidence that cuts it again), and a light window
 *       ({@code w < 1}) whose runs were faster than the figure moves it toward {@code min(r,
 *       observed)} by {@code max(1/2, w)}. Recorded only when that moves it by more than the margin.
 *   <li><b>Capacity</b> of a slot ({@link #capacity}): {@code planned - w * max(0, planned -
 *       observed)}: a slot that serves slower than planned gets the evidence's figure, in proportion
 *       to the evidence's weight; one that serves as fast or faster keeps what the plan expects (the
 *       plan raises it through the grouping's figure).
 *   <li><b>Overhead</b> ({@link #withOverhead}): every figure above is the engine's. An item also
 *       costs its worker decoding, encoding, producing and the Kafka clients' threads, out of the same
 *       CPU budget; for a model that runs in microseconds that is most of what a slot can serve. The
 *       worker reports it as {@code o}, seconds of the host's budget per item, and the slot's capacity
 *       becomes {@code 1 / (1/capacity + o)}: what the request partitions are shared by. A host
 *       whose worker has not said yet is given the other hosts' median CPU per item over its own
 *       budget ({@link #estimatedOverhead}).
 * </ul>
 */
public final class ServingRate {

  private ServingRate() {}

  /**
   * How much evidence counts fully: a window whose runs took {@code busyMs} on the runners, or
   * carried {@code items} items, has weight 1.
   */
  public record Fullness(double busyMs, long items) {
    public Fullness {
      if (!(busyMs > 0) || Double.isInfinite(busyMs)) {
        throw new IllegalArgumentException("busyMs: must be a finite number > 0, was " + busyMs);
      }
      if (items <= 0) {
        throw new IllegalArgumentException("items: must be > 0, was " + items);
      }
    }
  }

  /**
   * One slot of a grouping.
   *
   * @param runs what it ran over the window
   * @param batchTimesMs its size's profile: time of one run by batch size (measured sizes only)
   */
  public record Slot(ServedRuns runs, SortedMap<Integer, Double> batchTimesMs) {
    public Slot {
      if (batchTimesMs.isEmpty()) {
        throw new IllegalArgumentException("batchTimesMs: a slot needs at least one measured batch size");
      }
    }
  }

  /**
   * What a window of serving says about a grouping.
   *
   * @param throughputPerSecond the grouping's observed figure at the plan's batch, items per second
   * @param maxLatencyMs the largest time of one run of the plan's batch among its slots, at the speed served
   * @param weight the window's weight
   * @param speed the pooled speed of its slots ({@code sum expected / sum busy})
   * @param runs the slots' runs together
   */
  public record Observed(double throughputPerSecond, double maxLatencyMs, double weight, double speed, ServedRuns runs) {}

  /** {@code T(b)}: the time of one run of {@code batch} items, from the times measured at other batch sizes. */
  public static double batchTimeMs(SortedMap<Integer, Double> measured, int batch) {
    if (measured.isEmpty()) {
      throw new IllegalArgumentException("measured: no batch size was measured");
    }
    Double exact = measured.get(batch);
    if (exact != null) {
      return exact;
    }
    SortedMap<Integer, Double> below = measured.headMap(batch);
    SortedMap<Integer, Double> above = measured.tailMap(batch);
    if (below.isEmpty()) {
      return above.get(above.firstKey());
    }
    int lo = below.lastKey();
    if (above.isEmpty()) {
      return below.get(lo) * batch / lo;
    }
    int hi = above.firstKey();
    double t = (batch - lo) / (double) (hi - lo);
    return below.get(lo) + t * (above.get(hi) - below.get(lo));
  }

  /** The time the profile gives for the runs: {@code sum over runs of T(b_run)}. */
  public static double expectedBusyMs(ServedRuns runs, SortedMap<Integer, Double> measured) {
    double sum = 0;
    for (var e : runs.runsBySize().entrySet()) {
      sum += e.getValue() * batchTimeMs(measured, e.getKey());
    }
    return sum;
  }

  /** {@code expected / busy}; NaN when nothing ran. */
  public static double speed(ServedRuns runs, SortedMap<Integer, Double> measured) {
    if (!(runs.busyMs() > 0) || runs.runs() == 0) {
      return Double.NaN;
    }
    return expectedBusyMs(runs, measured) / runs.busyMs();
  }

  /** {@code min(1, max(busy / full.busyMs, items / full.items))}; 0 when nothing ran. */
  public static double weight(ServedRuns runs, Fullness full) {
    if (runs.runs() == 0 || !(runs.busyMs() > 0)) {
      return 0;
    }
    return Math.min(1, Math.max(runs.busyMs() / full.busyMs(), runs.items() / (double) full.items()));
  }

  /** The observed rate of one slot at batch {@code b}: {@code s * b * 1000 / T(b)}; NaN when it ran nothing. */
  public static double observedRate(Slot slot, int batch) {
    return speed(slot.runs(), slot.batchTimesMs()) * batch * 1000.0 / batchTimeMs(slot.batchTimesMs(), batch);
  }

  /**
   * What the window says about a grouping of these slots at the plan's batch {@code batch}; empty
   * when none of them ran anything.
   */
  public static Optional<Observed> grouping(int batch, List<Slot> slots, Fullness full) {
    double expected = 0;
    ServedRuns all = ServedRuns.none();
    for (Slot s : slots) {
      if (s.runs().runs() > 0 && s.runs().busyMs() > 0) {
        expected += expectedBusyMs(s.runs(), s.batchTimesMs());
        all = all.plus(s.runs());
      }
    }
    if (!(all.busyMs() > 0)) {
      return Optional.empty();
    }
    double pooled = expected / all.busyMs();
    double throughput = 0;
    double latency = 0;
    for (Slot s : slots) {
      double own = speed(s.runs(), s.batchTimesMs());
      double speed = Double.isNaN(own) ? pooled : own;
      double time = batchTimeMs(s.batchTimesMs(), batch) / speed;
      throughput += batch * 1000.0 / time;
      latency = Math.max(latency, time);
    }
    return Optional.of(new Observed(throughput, latency, weight(all, full), pooled, all));
  }

  /**
   * The figure to record for a grouping after a window, or empty when the window says nothing new.
   *
   * @param recorded the grouping's measurement so far (grouping mode, by the profiler or from serving), or null
   * @param observed the window's figure
   * @param weight the window's weight
   * @param margin a figure moved by no more than this (relative) is not news
   */
  public static OptionalDouble update(Double recorded, double observed, double weight, double margin) {
    if (!(weight > 0) || !(observed > 0) || Double.isInfinite(observed)) {
      return OptionalDouble.empty();
    }
    if (recorded == null || !(recorded > 0)) {
      return weight >= 1 ? OptionalDouble.of(observed) : OptionalDouble.empty();
    }
    double moved = recorded + Math.min(1, weight) * (observed - recorded);
    return Math.abs(moved - recorded) > margin * recorded ? OptionalDouble.of(moved) : OptionalDouble.empty();
  }

  /**
   * The serving figure to record when a window says a cut figure should come back toward the idle
   * one (see the class comment), or empty when it should not (the regular {@link #update} applies).
   *
   * @param served the grouping's figure from serving so far
   * @param idle the grouping's idle figure (the profiler's, else the plan's prediction); not
   *     positive: no recovery
   * @param observed what the window says, empty when the slots ran nothing in it
   * @param margin a figure moved by no more than this (relative) is not news
   */
  public static OptionalDouble recover(double served, double idle, Optional<Observed> observed, double margin) {
    if (!(served > 0) || !(idle > 0) || Double.isInfinite(idle) || !(served < idle * (1 - margin))) {
      return OptionalDouble.empty();
    }
    double target;
    double step;
    if (observed.isEmpty()) {
      target = idle;
      step = 0.5;
    } else if (observed.get().weight() < 1 && observed.get().throughputPerSecond() > served) {
      target = Math.min(idle, observed.get().throughputPerSecond());
      step = Math.max(0.5, observed.get().weight());
    } else {
      return OptionalDouble.empty();
    }
    double moved = served + step * (target - served);
    return moved - served > margin * served ? OptionalDouble.of(moved) : OptionalDouble.empty();
  }

  /**
   * A slot's capacity once what an item costs its worker beyond the engine's run is counted: {@code 1
   * / (1/capacity + overhead)}. {@code capacity} alone when the overhead is not known (NaN) or not
   * positive; 0 (unknown) stays 0.
   *
   * @param capacity items per second the engine gives the slot
   * @param overheadSeconds seconds of the host's CPU budget one item costs beyond its run
   */
  public static double withOverhead(double capacity, double overheadSeconds) {
    if (!(capacity > 0) || !(overheadSeconds > 0) || Double.isInfinite(overheadSeconds)) {
      return capacity;
    }
    return 1 / (1 / capacity + overheadSeconds);
  }

  /**
   * The overhead to count for a host whose worker has not said what an item costs it yet (it just
   * joined, or has served too little): what the other hosts' workers say, as CPU per item (their
   * overhead times their CPU budget, so hosts of any size compare), the median of them, over this
   * host's budget. Were it counted as nothing, the new host's capacity would be its engine's, often
   * thousands of times the others', and it would take every partition until its own figure came.
   *
   * @param others the other hosts' overheads (seconds of their budget per item) and budgets (cores), each {@code {overhead, budget}}
   * @param budgetCores this host's CPU budget in cores
   * @return empty when no other host said, or the budget is not known
   */
  public static OptionalDouble estimatedOverhead(List<double[]> others, double budgetCores) {
    if (!(budgetCores > 0)) {
      return OptionalDouble.empty();
    }
    double[] cpuPerItem = others.stream().filter(o -> o[0] > 0 && o[1] > 0 && Double.isFinite(o[0] * o[1]))
        .mapToDouble(o -> o[0] * o[1]).sorted().toArray();
    if (cpuPerItem.length == 0) {
      return OptionalDouble.empty();
    }
    int mid = cpuPerItem.length / 2;
    double median = cpuPerItem.length % 2 == 1 ? cpuPerItem[mid] : (cpuPerItem[mid - 1] + cpuPerItem[mid]) / 2;
    return OptionalDouble.of(median / budgetCores);
  }

  /** {@code planned - w * max(0, planned - observed)}: the plan's figure, cut toward slower evidence by its weight. */
  public static double capacity(double planned, double observed, double weight) {
    if (!(planned > 0) || Double.isNaN(observed) || !(weight > 0)) {
      return planned;
    }
    return planned - Math.min(1, weight) * Math.max(0, planned - observed);
  }
}

package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.CPU;

import io.partita.avro.BatchRuns;
import io.partita.avro.HostEnvironment;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.planning.ProfilePoint;
import io.partita.planning.grouping.ServedRuns;
import io.partita.planning.grouping.ServingRate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What the serving slots' evidence (their {@code SlotStatus.serving}: the runs of the last window,
 * their sizes and busy time) says about the plan, by {@link ServingRate}'s rules, compared like
 * with like with the single-size points the plan was made from:
 *
 * <ul>
 *   <li>{@link #measurements}: for each running grouping of a host, a grouping-mode {@link
 *       TimingEvent} ({@code condition = SERVING}) when a window says something new about it. The
 *       planner publishes it on {@code <p>.profile.timings} and folds it back like a profiler's, so
 *       the grouping is compared by what it served ({@code basis = measured}, {@code why} says "from
 *       serving") without taking the cores of a busy host, stays measured after it stops running (a
 *       plan that switched away does not switch back to a prediction), and a replay plans from it.
 *   <li>{@link #capacity}: a slot's capacity cut toward what it serves when that is slower than
 *       planned, by the evidence's weight, and back when it recovers.
 * </ul>
 *
 * The figure from serving is kept beside the profiler's ({@link Keys#groupingRecord}): the
 * profiler's stays the grouping's idle figure, and the two give the pool's serving factor by which
 * alternatives with only idle figures are compared ({@code ServingFactor}). A window moves the
 * grouping's serving figure so far or, with none yet, its profiler figure. A serving figure below
 * the idle one comes back toward it when a window after it ran nothing (the cut took the slots'
 * share away, so no traffic would ever raise it) or ran faster ({@link ServingRate#recover}).
 *
 * <p>A window is used once: a grouping's window must begin at or after the timestamp of the
 * grouping's latest measurement (from an earlier window, else by the profiler), so windows never
 * overlap what is already recorded and a stale status (its worker gone) is never counted twice.
 * Only slots whose status runs what the plan assigned there (model, version, pool; on a CPU pool the
 * partition's size) and are serving (READY or DEGRADED) count; a plan with a slot that does not
 * match yet (a plan change being applied) is left alone. Plans with no timing of their own here
 * (default placements, plans predicted from another host) have nothing to compare with. Pure.
 */
public final class ServedGroupings {
  /** The {@code condition} of the grouping-mode events made from serving evidence. */
  public static final String SERVING = "SERVING";
  private static final Set<String> SERVING_HEALTH = Set.of("READY", "DEGRADED");

  private ServedGroupings() {}

  /** One slot of a plan, with what its status says it served. */
  record PlanSlot(String key, int size, SlotStatus status, ServingRate.Slot slot) {}

  /**
   * The slot's evidence against the plan's profile, when its status runs what the plan assigned
   * there and carries serving evidence; else empty.
   */
  static Optional<PlanSlot> slot(PlanInputs in, PartitionPlan p, String slotKey, int size) {
    SlotStatus status = in.slots().get(slotKey);
    if (status == null || status.getServing() == null || !SERVING_HEALTH.contains(status.getHealth())
        || !status.getModel().equals(p.getModel()) || !status.getVersion().equals(p.getVersion())
        || !status.getPool().equals(p.getPool()) || (p.getPool().equals(CPU) && status.getThreads() != size)) {
      return Optional.empty();
    }
    SortedMap<Integer, Double> times = p.getPredictedFrom() == null ? batchTimes(in, p, size) : predictedTimes(in, p, size);
    if (times.isEmpty() || !times.containsKey(p.getBatch())) {
      return Optional.empty();
    }
    return Optional.of(new PlanSlot(slotKey, size, status, new ServingRate.Slot(runs(status.getServing()), times)));
  }

  /**
   * Whether a slot of {@code host} reports serving evidence with runs: its capacity is then cut by
   * comparing them with the host's timings ({@link #capacity}), so a change of those timings changes
   * the slot's capacity even when the partition plans stay as they were.
   */
  public static boolean servesOn(PlanInputs in, String host) {
    String prefix = Keys.hostSlot(host, "");
    for (SlotStatus status : in.slots().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      if (status.getServing() != null && status.getServing().getBatches() > 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * A predicted plan's profile for one partition size: the time of one run at the plan's batch, as
   * predicted from the similar host; empty when the prediction no longer gives that batch and
   * provider. A slot of a predicted plan is held to that prediction: were it not, a host planned by
   * prediction would keep its predicted capacity while a measured host's capacity is cut toward
   * what it serves, and the predicted one would take more than its share. The prediction is the
   * one the partition stage of the same pass made ({@link PredictedProfiles.PassCache}), not made again.
   */
  static SortedMap<Integer, Double> predictedTimes(PlanInputs in, PartitionPlan p, int size) {
    SortedMap<Integer, Double> out = new TreeMap<>();
    PredictedProfiles.HostProfile hp = PredictedProfiles.of(in, p.getModel(), p.getVersion(), p.getHost(), p.getPool());
    if (hp == null || hp.own()) {
      return hp == null ? out : batchTimes(in, p, size);
    }
    Plans.Profile profile = hp.profile();
    if (profile.batch() != p.getBatch() || !profile.provider().equals(p.getProvider())) {
      return out;
    }
    for (ProfilePoint point : profile.points()) {
      if (point.size() == size && point.latencyMs() > 0) {
        out.put(profile.batch(), point.latencyMs());
      }
    }
    return out;
  }

  /** The plan's profile for one partition size: time of one run by batch size, at the plan's provider. */
  static SortedMap<Integer, Double> batchTimes(PlanInputs in, PartitionPlan p, int size) {
    String prefix = Keys.partition(p.getModel(), p.getVersion(), p.getHost(), p.getPool()) + Keys.SEP + size + Keys.SEP;
    HostEnvironment env = in.hosts().get(p.getHost());
    SortedMap<Integer, Double> out = new TreeMap<>();
    for (TimingEvent e : in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      if (e.getProvider().equals(p.getProvider()) && e.getP50Ms() > 0) {
        out.put(e.getBatch(), Plans.batchTimeMs(e, env));
      }
    }
    return out;
  }

  static ServedRuns runs(ServingEvidence evidence) {
    SortedMap<Integer, Long> bySize = new TreeMap<>();
    for (BatchRuns b : evidence.getSizes()) {
      if (b.getRows() > 0 && b.getRuns() > 0) {
        bySize.merge(b.getRows(), b.getRuns(), Long::sum);
      }
    }
    return new ServedRuns(Math.max(0, evidence.getItems()), Math.max(0, evidence.getBusyNanos()) / 1e6, bySize);
  }

  /**
   * The capacity of one slot of a partition plan: {@code planned} (the plan's share for it), cut
   * toward the rate the slot serves at when its evidence says it is slower, by the evidence's
   * weight ({@link ServingRate#capacity}), then with what an item costs the host's worker beyond the
   * run counted ({@link ServingRate#withOverhead}, {@link #itemOverhead}).
   */
  public static double capacity(PlanInputs in, PlanSettings settings, PartitionPlan p, String slotKey, int size,
      double planned) {
    if (!settings.serving().enabled() || !(planned > 0)) {
      return planned;
    }
    double engine = planned;
    Optional<PlanSlot> slot = slot(in, p, slotKey, size);
    if (slot.isPresent()) {
      ServingRate.Slot s = slot.get().slot();
      engine = ServingRate.capacity(planned, ServingRate.observedRate(s, p.getBatch()),
          ServingRate.weight(s.runs(), settings.serving().fullness()));
    }
    OptionalDouble overhead = itemOverhead(in, p.getHost());
    return overhead.isPresent() ? ServingRate.withOverhead(engine, overhead.getAsDouble()) : engine;
  }

  /**
   * What an item costs the worker of {@code host} beyond the engine's run, seconds of the host's CPU
   * budget: as its serving slots' status says (the worker reports one figure for all its slots), or,
   * before it said, estimated from the other hosts' figures and the budgets in their environments
   * ({@link ServingRate#estimatedOverhead}); empty when no worker said.
   */
  static OptionalDouble itemOverhead(PlanInputs in, String host) {
    OptionalDouble own = reportedOverhead(in, host);
    if (own.isPresent()) {
      return own;
    }
    List<double[]> others = new ArrayList<>();
    for (String other : in.hosts().keySet()) {
      OptionalDouble theirs = other.equals(host) ? OptionalDouble.empty() : reportedOverhead(in, other);
      if (theirs.isPresent()) {
        others.add(new double[] {theirs.getAsDouble(), budgetCores(in.hosts().get(other))});
      }
    }
    return others.isEmpty() ? OptionalDouble.empty() : ServingRate.estimatedOverhead(others, budgetCores(in.hosts().get(host)));
  }

  /** The figure of the host's latest serving status that carries one. */
  private static OptionalDouble reportedOverhead(PlanInputs in, String host) {
    String prefix = Keys.hostSlot(host, "");
    SlotStatus latest = null;
    for (SlotStatus status : in.slots().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      if (status.getServing() != null && status.getServing().getItemOverheadNanos() != null
          && SERVING_HEALTH.contains(status.getHealth()) && (latest == null || status.getTimestamp() > latest.getTimestamp())) {
        latest = status;
      }
    }
    return latest == null ? OptionalDouble.empty() : OptionalDouble.of(latest.getServing().getItemOverheadNanos() / 1e9);
  }

  /** The CPU a host may use, in cores: its quota, at most its usable cores; 0 when its environment is not known. */
  private static double budgetCores(HostEnvironment env) {
    if (env == null) {
      return 0;
    }
    double cores = env.getUsableCores() > 0 ? env.getUsableCores() : env.getLogicalCores();
    return cores * Plans.quotaShare(env);
  }

  /**
   * The grouping-mode measurements from serving to record for the running groupings of one host:
   * at most one per live partition plan, when its slots' window says something new
   * ({@link ServingRate#update}).
   *
   * @param live the live partition plans (any host; those of {@code host} are looked at)
   * @param assignments the live slot assignments: which slots run each plan
   */
  public static List<TimingEvent> measurements(PlanInputs in, PlanSettings settings, String host,
      Collection<PartitionPlan> live, Collection<SlotAssignment> assignments) {
    List<TimingEvent> out = new ArrayList<>();
    if (!settings.serving().enabled()) {
      return out;
    }
    for (PartitionPlan p : live) {
      if (!p.getHost().equals(host) || !p.getPlanned() || p.getDefaultPlan() || p.getPredictedFrom() != null
          || p.getSizes().isEmpty()) {
        continue;
      }
      List<PlanSlot> slots = slotsOf(in, p, assignments);
      if (slots.isEmpty()) {
        continue;
      }
      measurement(in, settings, p, slots).ifPresent(out::add);
    }
    return out;
  }

  /** The plan's slots with their evidence, paired with its sizes in slot order; empty unless every one matches. */
  static List<PlanSlot> slotsOf(PlanInputs in, PartitionPlan p, Collection<SlotAssignment> assignments) {
    List<SlotAssignment> mine = new ArrayList<>();
    for (SlotAssignment a : assignments) {
      if (a.getHost().equals(p.getHost()) && a.getPool().equals(p.getPool()) && a.getModel().equals(p.getModel())
          && a.getVersion().equals(p.getVersion())) {
        mine.add(a);
      }
    }
    // AssignmentPlans numbers a plan's slots in the order of its sizes (descending)
    mine.sort(Comparator.comparingInt((SlotAssignment a) -> slotNumber(a.getSlot())).thenComparing(SlotAssignment::getSlot));
    if (mine.size() != p.getSizes().size()) {
      return List.of();
    }
    List<PlanSlot> out = new ArrayList<>();
    for (int i = 0; i < mine.size(); i++) {
      Optional<PlanSlot> slot = slot(in, p, Keys.hostSlot(p.getHost(), mine.get(i).getSlot()), p.getSizes().get(i));
      if (slot.isEmpty()) {
        return List.of();
      }
      out.add(slot.get());
    }
    return out;
  }

  private static Optional<TimingEvent> measurement(PlanInputs in, PlanSettings settings, PartitionPlan p,
      List<PlanSlot> slots) {
    List<ServingRate.Slot> rates = new ArrayList<>();
    long start = Long.MAX_VALUE;
    long end = Long.MIN_VALUE;
    boolean pinned = true;
    for (PlanSlot s : slots) {
      rates.add(s.slot());
      start = Math.min(start, s.status().getTimestamp() - Math.max(0, s.status().getServing().getWindowMs()));
      end = Math.max(end, s.status().getTimestamp());
      pinned &= s.status().getPinned();
    }
    Optional<ServingRate.Observed> observed = ServingRate.grouping(p.getBatch(), rates, settings.serving().fullness());
    String key = Keys.grouping(p.getModel(), p.getVersion(), p.getHost(), p.getPool(), p.getBatch(), p.getProvider(),
        p.getSizes());
    // The serving figure so far moves by the window's weight; a grouping with none yet starts from
    // the profiler's idle figure, so that a window of little traffic moves it little.
    TimingEvent served = in.groupings().get(Keys.served(key));
    TimingEvent idle = in.groupings().get(key);
    TimingEvent recorded = served != null ? served : idle;
    if (recorded != null && start < recorded.getTimestamp()) {
      return Optional.empty(); // the window overlaps what is recorded already
    }
    if (served != null) {
      // A figure cut below the idle one comes back when the traffic that would lower it stopped
      // (its share was taken away) or what little there was ran faster (ServingRate.recover).
      double reference = idle != null && idle.getThroughput() > 0 ? idle.getThroughput() : p.getPredictedThroughput();
      OptionalDouble back = ServingRate.recover(served.getThroughput(), reference, observed, settings.hysteresis());
      if (back.isPresent()) {
        double latency = served.getP50Ms() * served.getThroughput() / back.getAsDouble();
        long runs = observed.map(o -> o.runs().runs()).orElse(0L);
        return Optional.of(event(p, back.getAsDouble(), latency, runs, pinned, end));
      }
    }
    if (observed.isEmpty()) {
      return Optional.empty();
    }
    ServingRate.Observed o = observed.get();
    OptionalDouble figure = ServingRate.update(recorded == null ? null : recorded.getThroughput(),
        o.throughputPerSecond(), o.weight(), settings.hysteresis());
    if (figure.isEmpty()) {
      return Optional.empty();
    }
    double latency = recorded == null ? o.maxLatencyMs()
        : recorded.getP50Ms() + Math.min(1, o.weight()) * (o.maxLatencyMs() - recorded.getP50Ms());
    return Optional.of(event(p, figure.getAsDouble(), latency, o.runs().runs(), pinned, end));
  }

  /** The grouping-mode event from serving for the plan's grouping: its figure, latency, runs and window end. */
  private static TimingEvent event(PartitionPlan p, double throughput, double latency, long runs, boolean pinned,
      long end) {
    List<Integer> sizes = new ArrayList<>(p.getSizes());
    sizes.sort(Comparator.reverseOrder());
    return TimingEvent.newBuilder().setModel(p.getModel()).setVersion(p.getVersion()).setHost(p.getHost())
        .setPool(p.getPool()).setSize(sizes.stream().mapToInt(Integer::intValue).sum()).setBatch(p.getBatch())
        .setProvider(p.getProvider()).setGrouping(sizes).setP50Ms(latency).setP90Ms(latency).setP99Ms(latency)
        .setMeanMs(latency).setSamples((int) Math.min(Integer.MAX_VALUE, runs))
        .setThroughput(throughput).setMemoryBytes(p.getMemoryBytes()).setStable(true).setPinned(pinned)
        .setOk(true).setError(null).setRequestId(null).setTimestamp(end).setCondition(SERVING).build();
  }

  /** The n of a slot named {@code <pool>-<n>}; slots named otherwise sort last. */
  static int slotNumber(String slot) {
    int cut = slot.lastIndexOf('-');
    try {
      return Integer.parseInt(slot.substring(cut + 1));
    } catch (NumberFormatException e) {
      return Integer.MAX_VALUE;
    }
  }
}

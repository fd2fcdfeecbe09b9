package io.partita.bench;

import io.partita.avro.Demand;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.plan.Plans;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Planning at fleet scale, by simulation: the live planner's topology ({@link PlanRun}: the same
 * {@code PlannerTopology.build}, in Kafka's test driver, as {@code partita replay} runs it) fed a
 * synthetic fleet ({@link ScaleFleet}), then re-planned after one host's timings change and after
 * a whole hardware kind's timings change, each change followed by one planning pass (one
 * debounce interval of the driver's clock). Reports what each size costs: events folded per
 * second, pass times, time per stage, plan records written, heap and state-store bytes.
 */
final class ScaleBench {
  private ScaleBench() {}

  record Cell(int hosts, int models, int serviceModelsPerModel) {
    /** No cell (no churn run). */
    static final Cell NONE = new Cell(0, 0, 0);

    static Cell parse(String text) {
      String[] parts = text.trim().split("x");
      if (parts.length != 3) {
        throw new IllegalArgumentException("scale cell '" + text + "': expected HOSTSxMODELSxSERVICE_MODELS, e.g. 100x50x10");
      }
      try {
        Cell cell = new Cell(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), Integer.parseInt(parts[2]));
        if (cell.hosts() < 2 || cell.models() < 1 || cell.serviceModelsPerModel() < 1) {
          throw new IllegalArgumentException("scale cell '" + text + "': needs at least 2 hosts, 1 model and 1 service model");
        }
        return cell;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("scale cell '" + text + "': expected three whole numbers, e.g. 100x50x10");
      }
    }

    String label() {
      return hosts + " x " + models + " x " + serviceModelsPerModel;
    }
  }

  /** One planning pass: its time (pass and asks), time per stage, plan records it wrote (in all and by table). */
  record Pass(double ms, Map<String, Double> stageMs, int records, Map<String, Integer> recordsByTable) {}

  record Outcome(Cell cell, long seed, long events, double foldSeconds, Pass initial, List<Pass> oneHost,
      List<Pass> kind, int unchangedRecords, long heapBytes, long storeBytes, int liveRecords, List<ChurnPhase> churn) {
    double eventsPerSecond() {
      return events / foldSeconds;
    }
  }

  /** What one cell repeats: one-host changes, kind changes, and simulated seconds of churn (0: none). */
  record Rounds(int oneHost, int kind, int churnSeconds, int jitterPairs) {
    Rounds(int oneHost, int kind) {
      this(oneHost, kind, 0, 0);
    }
  }

  /** Runs one cell on a fresh planner, then its churn phases if asked ({@link #churn}). */
  static Outcome run(Cell cell, long seed, Rounds rounds, Path workDir) throws Exception {
    long heapBefore = usedHeapAfterGc();
    int spare = rounds.churnSeconds() > 0 ? Math.max(2, cell.hosts() / 100) : 0;
    // One new host a second for the last churn phase.
    int fresh = rounds.churnSeconds();
    Sim sim = new Sim(new ScaleFleet(cell.hosts() + spare, fresh, cell.models(), cell.serviceModelsPerModel(), seed),
        cell.hosts(), workDir);
    try (sim) {
      long t0 = System.nanoTime();
      long events = sim.loadFleet();
      double foldSeconds = (System.nanoTime() - t0) / 1e9;
      Pass initial = sim.pass();
      SplittableRandom random = new SplittableRandom(seed + 1);
      List<Pass> oneHost = new ArrayList<>();
      for (int r = 0; r < rounds.oneHost(); r++) {
        int h = random.nextInt(cell.hosts());
        sim.changeHost(h, random.nextBoolean() ? 0.8 : 1.25);
        oneHost.add(sim.pass());
      }
      List<Pass> kind = new ArrayList<>();
      for (int r = 0; r < rounds.kind(); r++) {
        sim.changeKind(r % ScaleFleet.KINDS.size(), r % 2 == 0 ? 0.8 : 1.25);
        kind.add(sim.pass());
      }
      // The same bytes again: no plan record may change.
      sim.resendHost(random.nextInt(cell.hosts()));
      int unchanged = sim.pass().records();
      long storeBytes = sim.run.storeBytes().values().stream().mapToLong(Long::longValue).sum();
      int live = sim.run.tables().values().stream().mapToInt(Map::size).sum();
      long heap = usedHeapAfterGc() - heapBefore;
      System.out.printf("Scale: %s: %d events in %.1f s, initial pass %.1f s, one host p50 %.0f ms, kind p50 %.0f ms%n",
          cell.label(), events, foldSeconds, initial.ms() / 1000, percentile(oneHost, 0.5), percentile(kind, 0.5));
      List<ChurnPhase> churn = rounds.churnSeconds() > 0 ? churn(sim, seed, rounds.churnSeconds(), rounds.jitterPairs())
          : List.of();
      return new Outcome(cell, seed, events, foldSeconds, initial, oneHost, kind, unchanged, heap, storeBytes, live,
          churn);
    }
  }

  /**
   * One churn phase's figures.
   *
   * @param predictedPlans partition plans of the joining hosts that were predicted from another
   *     host when their own profile arrived (0 in the phases where it arrives with the host)
   */
  record ChurnPhase(String what, int seconds, int passes, double p50Ms, double p99Ms, double maxMs,
      Map<String, Double> recordsPerMinute, long events, Map<String, Double> meanStageMs, Pass slowest,
      int predictedPlans) {}

  /** Passes between a new host's environment and its profile in the last churn phase. */
  static int profileLag(int seconds) {
    return Math.max(1, Math.min(5, seconds / 2));
  }

  /**
   * Churn on a loaded fleet: each simulated second one host leaves (its environment deleted) and
   * one that left before (or a spare) joins again (its environment and a fresh profile of every
   * model), then one planning pass. A first phase with exact timings (the real changes), a second
   * where the joining host's profile and {@code jitterPairs} re-measured (host, model) pairs per
   * second jitter by up to +-5 %. A third where the joining host is new hardware that never
   * profiled: its environment and baseline score arrive first and its profile {@link #profileLag}
   * passes later, as a profiler publishes them, so the passes between plan it by prediction from
   * similar hosts.
   */
  private static List<ChurnPhase> churn(Sim sim, long seed, int seconds, int jitterPairs) {
    ScaleFleet fleet = sim.fleet;
    SplittableRandom random = new SplittableRandom(seed + 2);
    List<Integer> active = new ArrayList<>();
    List<Integer> away = new ArrayList<>();
    for (int h = 0; h < fleet.hosts; h++) {
      (h < sim.active ? active : away).add(h);
    }
    List<ChurnPhase> phases = new ArrayList<>();
    for (double jitter : new double[] {0, 0.05}) {
      Map<String, Integer> before = sim.emissions();
      List<Pass> passes = new ArrayList<>();
      long events = 0;
      for (int s = 0; s < seconds; s++) {
        int leaving = active.remove(random.nextInt(active.size()));
        sim.leave(leaving);
        int joining = away.remove(random.nextInt(away.size()));
        events += sim.join(joining, jitter, random);
        active.add(joining);
        away.add(leaving);
        for (int j = 0; j < (jitter > 0 ? jitterPairs : 0); j++) {
          int h = active.get(random.nextInt(active.size()));
          events += sim.remeasure(h, random.nextInt(fleet.models), 1 + jitter * (2 * random.nextDouble() - 1));
        }
        passes.add(sim.pass());
      }
      phases.add(phase(sim, jitter == 0 ? "joins and leaves, exact timings" : "the same, timings jittered +-5 %",
          seconds, before, passes, events, 0));
    }
    if (fleet.freshHosts >= seconds) {
      int lag = profileLag(seconds);
      Map<String, Integer> before = sim.emissions();
      List<Pass> passes = new ArrayList<>();
      long events = 0;
      int predicted = 0;
      List<Integer> unprofiled = new ArrayList<>();
      for (int s = 0; s < seconds; s++) {
        int leaving = active.remove(random.nextInt(active.size()));
        sim.leave(leaving);
        int joining = fleet.hosts + s;
        sim.arrive(joining);
        unprofiled.add(joining);
        if (unprofiled.size() > lag) {
          int h = unprofiled.remove(0);
          predicted += sim.predictedPlans(h);
          events += sim.profile(h);
        }
        passes.add(sim.pass());
      }
      phases.add(phase(sim, "new hosts, profile " + lag + " passes after the environment (" + predicted
          + " partition plans predicted)", seconds, before, passes, events, predicted));
    }
    return phases;
  }

  private static ChurnPhase phase(Sim sim, String what, int seconds, Map<String, Integer> before, List<Pass> passes,
      long events, int predictedPlans) {
    Map<String, Integer> after = sim.emissions();
    Map<String, Double> perMinute = new LinkedHashMap<>();
    for (PlanTable t : PlanTable.values()) {
      perMinute.put(t.id(), (after.get(t.id()) - before.get(t.id())) * 60.0 / seconds);
    }
    double[] sorted = passes.stream().mapToDouble(Pass::ms).sorted().toArray();
    Pass slowest = passes.stream().max(Comparator.comparingDouble(Pass::ms)).orElseThrow();
    return new ChurnPhase(what, seconds, sorted.length, percentile(sorted, 0.5), percentile(sorted, 0.99),
        sorted[sorted.length - 1], perMinute, events, meanStages(passes), slowest, predictedPlans);
  }

  static double percentile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }

  static double percentile(List<Pass> passes, double q) {
    return percentile(passes.stream().mapToDouble(Pass::ms).sorted().toArray(), q);
  }

  /** Mean time per stage over the passes, in ms. */
  static Map<String, Double> meanStages(List<Pass> passes) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String stage : PlannerMetrics.STAGES) {
      out.put(stage, passes.stream().mapToDouble(p -> p.stageMs().getOrDefault(stage, 0.0)).average().orElse(0));
    }
    return out;
  }

  static long usedHeapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(50);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** A planner run fed from a fleet, with the clock of records and the counters of passes. */
  private static final class Sim implements AutoCloseable {
    final ScaleFleet fleet;
    final PlannerMetrics metrics = PlannerMetrics.inMemory();
    final PlanRun run;
    final Topic<TimingEvent> timings;
    final Topic<HostEnvironment> environments;
    final Topic<PartitionPlan> partitions;
    final Topics topics = new Topics("scale");
    final Codecs codecs = Codecs.singleObject();
    final double[] factor;
    /** Hosts {@code 0..active-1} are loaded first; the others are spares that churn brings in. */
    final int active;
    long clock = ScaleFleet.T0;

    Sim(ScaleFleet fleet, int active, Path workDir) throws Exception {
      this.fleet = fleet;
      this.active = active;
      Path state = Files.createTempDirectory(workDir, "scale-state");
      run = new PlanRun(PlanSettings.defaults(topics), codecs, state, metrics);
      timings = topics.profileTimings(codecs);
      environments = topics.hostEnvironments(codecs);
      partitions = topics.planPartitions(codecs);
      factor = new double[fleet.hosts + fleet.freshHosts];
      Arrays.fill(factor, 1.0);
    }

    long loadFleet() {
      return loadFleet(active);
    }

    /** The catalog, demand, and the first {@code hosts} hosts with their profiles; returns the timing events. */
    long loadFleet(int hosts) {
      Topic<ModelVersion> versions = topics.catalogModels(codecs);
      Topic<ServiceModel> services = topics.catalogServices(codecs);
      Topic<Demand> demand = topics.demand(codecs);
      for (int m = 0; m < fleet.models; m++) {
        for (ModelVersion v : fleet.catalogVersions(m)) {
          run.pipe(versions.name(), Keys.modelVersion(v.getModel(), v.getVersion()), versions.encode(v), clock);
        }
        for (ServiceModel sm : fleet.serviceModels(m)) {
          run.pipe(services.name(), sm.getName(), services.encode(sm), clock);
        }
        for (int s = 0; s < fleet.serviceModelsPerModel; s++) {
          Demand d = fleet.demand(m, s);
          run.pipe(demand.name(), d.getServiceModel(), demand.encode(d), clock);
        }
      }
      long events = 0;
      for (int h = 0; h < hosts; h++) {
        run.pipe(environments.name(), fleet.host(h), environments.encode(fleet.environment(h)), clock);
        for (int m = 0; m < fleet.models; m++) {
          events += publish(fleet.timings(h, m, factor[h], ++clock));
        }
      }
      return events;
    }

    int publish(List<TimingEvent> events) {
      for (TimingEvent e : events) {
        run.pipe(timings.name(), Keys.timing(e), timings.encode(e), e.getTimestamp());
      }
      return events.size();
    }

    /** Host {@code h} re-profiled every model, its times multiplied by {@code by}. */
    int changeHost(int h, double by) {
      factor[h] *= by;
      return resendHost(h);
    }

    int resendHost(int h) {
      int n = 0;
      long at = ++clock;
      for (int m = 0; m < fleet.models; m++) {
        List<TimingEvent> events = fleet.timings(h, m, factor[h], at);
        n += publish(events);
      }
      return n;
    }

    /** Every host of one kind re-profiled (a driver update), its times multiplied by {@code by}. */
    int changeKind(int kind, double by) {
      int n = 0;
      for (int h = kind; h < active; h += ScaleFleet.KINDS.size()) {
        n += changeHost(h, by);
      }
      return n;
    }

    void leave(int h) {
      run.pipe(environments.name(), fleet.host(h), null, ++clock);
    }

    /** Host {@code h} comes back: its environment, then a fresh profile of every model jittered by up to {@code jitter}. */
    int join(int h, double jitter, SplittableRandom random) {
      run.pipe(environments.name(), fleet.host(h), environments.encode(fleet.environment(h)), ++clock);
      int n = 0;
      for (int m = 0; m < fleet.models; m++) {
        n += publish(fleet.timings(h, m, factor[h] * (1 + jitter * (2 * random.nextDouble() - 1)), ++clock));
      }
      return n;
    }

    /** New host {@code h} arrives: its environment with its baseline score, no timing yet. */
    void arrive(int h) {
      run.pipe(environments.name(), fleet.host(h), environments.encode(fleet.environment(h)), ++clock);
    }

    /** Host {@code h}'s profile of every model, as its profiler publishes it after the environment. */
    int profile(int h) {
      int n = 0;
      for (int m = 0; m < fleet.models; m++) {
        n += publish(fleet.timings(h, m, factor[h], ++clock));
      }
      return n;
    }

    /** How many of host {@code h}'s CPU partition plans are predicted from another host's timings. */
    int predictedPlans(int h) {
      int n = 0;
      for (int m = 0; m < fleet.models; m++) {
        for (String v : fleet.versions(m)) {
          byte[] bytes = run.plan(PlanTable.PARTITIONS, Keys.partition(fleet.model(m), v, fleet.host(h), Plans.CPU));
          if (bytes != null && partitions.decode(bytes).getPredictedFrom() != null) {
            n++;
          }
        }
      }
      return n;
    }

    int remeasure(int h, int m, double by) {
      return publish(fleet.timings(h, m, factor[h] * by, ++clock));
    }

    /** One debounce interval of the driver's clock: one planning pass over what changed. */
    Pass pass() {
      Map<String, Double> stagesBefore = stageTotals();
      double passBefore = metrics.pass().totalTime(TimeUnit.MILLISECONDS);
      Map<String, Integer> recordsBefore = emissions();
      run.advanceWallClock(PlanRun.DEBOUNCE);
      Map<String, Double> stages = stageTotals();
      stages.replaceAll((k, v) -> v - stagesBefore.get(k));
      double ms = metrics.pass().totalTime(TimeUnit.MILLISECONDS) - passBefore + stages.get("asks");
      Map<String, Integer> byTable = emissions();
      byTable.replaceAll((k, v) -> v - recordsBefore.get(k));
      return new Pass(ms, stages, byTable.values().stream().mapToInt(Integer::intValue).sum(), byTable);
    }

    Map<String, Integer> emissions() {
      Map<String, Integer> out = new LinkedHashMap<>();
      run.emissions().forEach((t, n) -> out.put(t.id(), n));
      return out;
    }

    private Map<String, Double> stageTotals() {
      Map<String, Double> out = new LinkedHashMap<>();
      for (String stage : PlannerMetrics.STAGES) {
        out.put(stage, metrics.stage(stage).totalTime(TimeUnit.MILLISECONDS));
      }
      return out;
    }

    @Override
    public void close() {
      run.close();
    }
  }

  /** The driver's clock moves one debounce interval per pass; records carry the simulated time. */
  static Duration debounce() {
    return PlanRun.DEBOUNCE;
  }
}

package io.partita.bench;

import ai.onnxruntime.OrtEnvironment;
import io.partita.avro.GroupingOption;
import io.partita.avro.HostEnvironment;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ProfileRequest;
import io.partita.avro.SlotAssignment;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.catalog.CatalogPublisher;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.kafka.AvroMapper;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ModelRef;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileRunner;
import io.partita.profiler.run.ProfileSink;
import io.partita.profiler.run.ProfileSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The planner against reality on this machine's CPU pool, with the loop closed as it runs live:
 *
 * <ol>
 *   <li>the profiler's runner measures T(k) of the model at one batch size on each partition size;
 *   <li>the planner topology (the live planner's builder, in Kafka's test driver, as {@code partita
 *       replay} runs it) plans from those points and asks, on {@code profile.requests}, for
 *       grouping-mode measurements of its choice (and of a runner-up within the margin);
 *   <li>each request is measured by the profiler's own runner ({@link ProfileRunner}, the code the
 *       profiler worker runs for a request) and the timing events go back to the planner, which
 *       re-plans; the simulated clock moves past the planner's rate limit between rounds, until the
 *       planner asks for nothing more (the loop has closed);
 *   <li>then every grouping of the pool runs once more for real, independently, and the planner's
 *       figures (the predictions before the loop, what the final plan expects after it) are
 *       compared with that check.
 * </ol>
 */
final class PlannerRealityBench {
  private static final String HOST = "bench";
  private static final String POOL = "cpu";
  private static final int MAX_ROUNDS = 8;

  private PlannerRealityBench() {}

  /**
   * One grouping of the pool.
   *
   * @param predicted the sum of the single-size points (the plan before the loop)
   * @param planned what the final plan expects of it (its measurement, or its corrected prediction);
   *     NaN when the final plan does not list it
   * @param basis "measured" or "predicted" in the final plan; empty when not listed
   * @param check the independent grouping-mode run after the loop
   */
  record Row(List<Integer> sizes, double predicted, double planned, String basis, double check, boolean first,
      boolean chosen) {}

  /**
   * @param asks profile requests the planner sent; groupingsMeasured the groupings they named
   * @param why the final plan's own sentence
   * @param assignments the final plan's slots for this host ({@code plan.assignments}, key host/slot), what a
   *     worker following the plan runs
   */
  record Outcome(String model, int batch, int cores, List<Row> rows, int asks, int groupingsMeasured, int rounds,
      List<Integer> firstChoice, List<Integer> finalChoice, String why, List<SlotAssignment> assignments, String error) {}

  /** The host id the loop's timings and environment name: a worker following the plan runs with this {@code host.id}. */
  static String host() {
    return HOST;
  }

  /**
   * Runs the loop for one model. The model's manifest asks for as many instances of its service
   * model as the pool has cores (the most slots a plan can give it), so that every planned slot
   * serves it: with the default of one instance, all of a plan's slots but one would hold no
   * instance and stay idle.
   */
  static Outcome run(BenchModel model, int batch, long budgetMs, Path workDir) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    ProbedHost host = HostProbe.live().probe(HOST, ProviderProbe.probe(env));
    Measurer.Settings settings = model.profilerSettings(env, budgetMs);
    ProfileRunner runner = new ProfileRunner(env, settings);
    Path repo = Files.createTempDirectory(workDir, "loop-repo");
    Files.createDirectories(repo.resolve(model.name()).resolve("1"));
    Files.copy(model.file(), repo.resolve(model.name()).resolve("1").resolve("model.onnx"));
    int cores = host.usableCores();
    // As many instances as the pool has cores: every slot a plan can give the model holds one (docs/models.md).
    Files.writeString(repo.resolve(model.name()).resolve("model.yaml"),
        "serviceModels:\n  " + model.name() + ":\n    instances: " + cores + "\n");
    List<ModelRef> refs = List.of(ModelRef.ofFile(model.name(), "1", model.file()));

    Topics topics = new Topics("bench-loop");
    Codecs codecs = Codecs.singleObject();
    PlanSettings planSettings = PlanSettings.defaults(topics);
    long interval = planSettings.measure().intervalMs();
    Path state = Files.createTempDirectory(workDir, "loop-state");
    try (PlanRun plan = new PlanRun(planSettings, codecs, state)) {
      long[] clock = {1_700_000_000_000L};
      for (var record : CatalogPublisher.records(ModelRepository.scan(repo), topics, codecs)) {
        plan.pipe(record.topic(), record.key(), record.value(), clock[0]);
      }
      plan.pipe(topics.hostEnvironments(), HOST, codecs.codec(HostEnvironment.class)
          .encode(topics.hostEnvironments(), AvroMapper.environment(host, clock[0])), clock[0]);

      // 1. Single-size points, as a profiler's default run measures them.
      Map<Integer, Double> points = new TreeMap<>();
      String[] firstError = {null};
      ProfileSpec spec = new ProfileSpec("bench-points", model.name(), "1", List.of(), List.of(batch), List.of(),
          List.of(ProviderProbe.Provider.CPU), budgetMs);
      runner.run(spec, host, refs, sink(plan, topics, codecs, clock, spec.requestId(), r -> {
        if (r.ok() && r.stable()) {
          points.put(r.size(), r.p50Ms());
        } else if (firstError[0] == null) {
          firstError[0] = "k=" + r.size() + ": " + (r.ok() ? "unstable" : r.error());
        }
      }));
      plan.plan();
      PartitionPlan first = partitionPlan(plan, topics, codecs, model.name());
      if (first == null || !first.getPlanned() || first.getDefaultPlan()) {
        return new Outcome(model.name(), batch, cores, List.of(), 0, 0, 0, List.of(), List.of(), "", List.of(),
            "the planner had no measured point to plan from (" + (first != null && first.getDefaultPlan() ? "default plan" : "no plan")
                + (firstError[0] == null ? "" : "; first failure " + firstError[0]) + ")");
      }

      // 2-3. The planner asks, the profiler's runner answers, the planner re-plans; until it asks for nothing.
      int handled = 0;
      int groupingsMeasured = 0;
      int rounds = 0;
      while (rounds < MAX_ROUNDS) {
        List<ProfileRequest> asked = plan.profileRequests().stream()
            .map(kv -> codecs.codec(ProfileRequest.class).decode(topics.profileRequests(), kv.value)).toList();
        if (asked.size() == handled) {
          break;
        }
        for (ProfileRequest request : asked.subList(handled, asked.size())) {
          ProfileSpec measure = AvroMapper.spec(request, budgetMs);
          groupingsMeasured += measure.groupings().size();
          runner.run(measure, host, refs, sink(plan, topics, codecs, clock, request.getRequestId(), r -> {}));
        }
        handled = asked.size();
        rounds++;
        plan.plan();
        // past the planner's rate limit, so that a further ask can go out
        plan.advanceWallClock(Duration.ofMillis(interval + 1_000));
      }
      PartitionPlan last = partitionPlan(plan, topics, codecs, model.name());
      List<SlotAssignment> assignments = new ArrayList<>();
      plan.tables().get(PlanTable.ASSIGNMENTS).forEach((key, bytes) -> {
        SlotAssignment a = topics.planAssignments(codecs).decode(bytes);
        if (a.getHost().equals(HOST) && a.getModel().equals(model.name())) {
          assignments.add(a);
        }
      });

      // 4. Every grouping once more, independently of what the planner saw.
      Measurer measurer = new Measurer(env, host, settings);
      Map<List<Integer>, GroupingOption> listed = new LinkedHashMap<>();
      last.getRunnersUp().forEach(o -> listed.put(List.copyOf(o.getSizes()), o));
      List<Row> rows = new ArrayList<>();
      // Every grouping of the sizes a profiler measures, even where a point was unstable (its
      // prediction is then unknown): the naive one instance on all cores is always among them.
      for (List<Integer> grouping : groupings(cores, measurer.defaultSizes(ProviderProbe.Provider.CPU))) {
        double predicted = 0;
        for (int k : grouping) {
          predicted += points.containsKey(k) ? batch * 1000.0 / points.get(k) : Double.NaN;
        }
        GroupingResult check = measurer.measureGrouping(refs.get(0), ProviderProbe.Provider.CPU, grouping, batch);
        boolean chosen = grouping.equals(last.getSizes());
        double planned = Double.NaN;
        String basis = "";
        if (chosen) {
          planned = last.getExpectedThroughput() == null ? Double.NaN : last.getExpectedThroughput();
          basis = last.getBasis();
        } else if (listed.containsKey(grouping) && listed.get(grouping).getExpectedThroughput() != null) {
          planned = listed.get(grouping).getExpectedThroughput();
          basis = listed.get(grouping).getBasis();
        }
        rows.add(new Row(grouping, predicted, planned, basis, check.ok() ? check.aggregateThroughput() : Double.NaN,
            grouping.equals(first.getSizes()), chosen));
      }
      return new Outcome(model.name(), batch, cores, rows, handled, groupingsMeasured, rounds,
          List.copyOf(first.getSizes()), List.copyOf(last.getSizes()), last.getWhy() == null ? "" : last.getWhy(),
          List.copyOf(assignments), null);
    }
  }

  /** A sink that hands every measured point or grouping to the planner as the profiler worker publishes it. */
  private static ProfileSink sink(PlanRun plan, Topics topics, Codecs codecs, long[] clock, String requestId,
      Consumer<TimingResult> points) {
    return new ProfileSink() {
      @Override
      public void starting(int done, int total, String label) {}

      @Override
      public void point(TimingResult result, int done, int total) {
        points.accept(result);
        send(AvroMapper.timing(result, requestId, ++clock[0]));
      }

      @Override
      public void grouping(GroupingResult result, int done, int total) {
        send(AvroMapper.timing(result, requestId, ++clock[0]));
      }

      private void send(TimingEvent e) {
        plan.pipe(topics.profileTimings(), AvroMapper.timingKey(e),
            codecs.codec(TimingEvent.class).encode(topics.profileTimings(), e), e.getTimestamp());
      }
    };
  }

  private static PartitionPlan partitionPlan(PlanRun plan, Topics topics, Codecs codecs, String model) {
    byte[] bytes = plan.tables().get(PlanTable.PARTITIONS).get(Keys.partition(model, "1", HOST, POOL));
    return bytes == null ? null : codecs.codec(PartitionPlan.class).decode(PlanTable.PARTITIONS.topic(topics), bytes);
  }

  /** Every multiset of measured sizes that uses all {@code n} cores, largest parts first. */
  static List<List<Integer>> groupings(int n, List<Integer> sizes) {
    List<List<Integer>> out = new ArrayList<>();
    List<Integer> desc = new ArrayList<>(sizes);
    desc.sort(Comparator.reverseOrder());
    fill(n, desc, 0, new ArrayList<>(), out);
    return out;
  }

  private static void fill(int left, List<Integer> sizes, int from, List<Integer> current, List<List<Integer>> out) {
    if (left == 0) {
      out.add(List.copyOf(current));
      return;
    }
    for (int i = from; i < sizes.size(); i++) {
      int k = sizes.get(i);
      if (k <= left) {
        current.add(k);
        fill(left - k, sizes, i, current, out);
        current.remove(current.size() - 1);
      }
    }
  }
}

package io.partita.launcher.bench;

import ai.onnxruntime.OrtEnvironment;
import io.partita.planning.GroupingObjective;
import io.partita.planning.GroupingPlan;
import io.partita.planning.GroupingPlanner;
import io.partita.planning.GroupingProblem;
import io.partita.planning.ProfilePoint;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ModelRef;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.onnx.TinyModels;
import java.util.ArrayList;
import java.util.List;

/**
 * The planner against reality on this machine's CPU pool: measure T(k) for each partition size,
 * let the grouping planner choose, then run every grouping of the pool for real (the profiler's
 * grouping mode: all partitions at once, pinned to their own cores) and compare the choice with
 * the best measured grouping (oracle) and with one instance on all cores (naive).
 */
final class PlannerRealityBench {
  private PlannerRealityBench() {}

  record Row(List<Integer> sizes, double predicted, double measured, boolean chosen) {}

  record Outcome(List<Row> rows, int cores, int batch, String model) {}

  static Outcome run(int batch, long budgetMs) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    ProbedHost host = HostProbe.live().probe("bench", ProviderProbe.probe(env));
    Measurer measurer = new Measurer(env, host, Measurer.Settings.ofBudgetMillis(budgetMs));
    ModelRef model = ModelRef.ofBytes("reference-mlp", "1", TinyModels.referenceMlp());
    int cores = host.usableCores();
    List<ProfilePoint> profile = new ArrayList<>();
    for (int k : measurer.defaultSizes(ProviderProbe.Provider.CPU)) {
      TimingResult t = measurer.measurePoint(model, ProviderProbe.Provider.CPU, k, batch);
      if (t.ok()) {
        profile.add(new ProfilePoint(k, t.p50Ms(), Math.max(1, t.memoryBytes())));
      }
    }
    GroupingPlan plan = GroupingPlanner.plan(new GroupingProblem(
        model.model(), cores, Long.MAX_VALUE / 4, batch, profile, 0, 0, null, GroupingObjective.THROUGHPUT));
    List<Integer> chosen = plan.choice() == null ? List.of() : plan.choice().sizes();
    List<Row> rows = new ArrayList<>();
    for (List<Integer> grouping : groupings(cores, profile.stream().map(ProfilePoint::size).toList())) {
      double predicted = 0;
      for (int k : grouping) {
        double t = profile.stream().filter(p -> p.size() == k).findFirst().orElseThrow().latencyMs();
        predicted += batch * 1000.0 / t;
      }
      GroupingResult measured = measurer.measureGrouping(model, ProviderProbe.Provider.CPU, grouping, batch);
      rows.add(new Row(grouping, predicted, measured.ok() ? measured.aggregateThroughput() : Double.NaN, grouping.equals(chosen)));
    }
    return new Outcome(rows, cores, batch, model.model());
  }

  /** Every multiset of measured sizes that uses all {@code n} cores, largest parts first. */
  static List<List<Integer>> groupings(int n, List<Integer> sizes) {
    List<List<Integer>> out = new ArrayList<>();
    List<Integer> desc = new ArrayList<>(sizes);
    desc.sort(java.util.Comparator.reverseOrder());
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

package io.partita.launcher.bench;

import ai.onnxruntime.OrtEnvironment;
import io.partita.planning.GroupingObjective;
import io.partita.planning.GroupingPlan;
import io.partita.planning.GroupingPlanner;
import io.partita.planning.GroupingProblem;
import io.partita.planning.ProfilePoint;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ModelRef;
import io.partita.profiler.measure.TimingResult;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The slots the plan gives a bench model on this machine: the profiler measures T(k) of the model
 * at the batch size on each partition size of the CPU pool, and the grouping planner (the planner's
 * pure core, as the live planner calls it) chooses the partition sizes. The pipeline then runs one
 * pinned worker slot per chosen partition ({@code worker.partitions}) with that batch size.
 */
final class PlannedGrouping {
  private PlannedGrouping() {}

  /**
   * @param sizes the chosen partition sizes; empty when the planner had nothing to choose from
   * @param batch the profile batch, the slots' largest batch
   * @param profile what was measured, "k=1: 0.12 ms, k=2: ..." for the report
   */
  record Planned(List<Integer> sizes, int batch, String profile) {
    String label() {
      return "planned: " + sizes.size() + " slot" + (sizes.size() == 1 ? "" : "s") + " " + sizes + " pinned, up to " + batch;
    }

    String partitionsSetting() {
      return sizes.stream().map(String::valueOf).collect(Collectors.joining(","));
    }
  }

  static Planned plan(BenchModel model, int batch, long budgetMs) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    ProbedHost host = HostProbe.live().probe("bench", ProviderProbe.probe(env));
    // Dynamic dimensions past the batch (OCR's width) by name, as `partita profile --dim` gives them.
    Measurer measurer = new Measurer(env, host, model.profilerSettings(env, budgetMs));
    ModelRef ref = ModelRef.ofFile(model.name(), "1", model.file());
    String firstError = null;
    List<ProfilePoint> profile = new ArrayList<>();
    StringBuilder measured = new StringBuilder();
    for (int k : measurer.defaultSizes(ProviderProbe.Provider.CPU)) {
      TimingResult t = measurer.measurePoint(ref, ProviderProbe.Provider.CPU, k, batch);
      if (t.ok()) {
        profile.add(new ProfilePoint(k, t.p50Ms(), Math.max(1, t.memoryBytes())));
        measured.append(measured.length() == 0 ? "" : ", ").append("k=").append(k).append(": ").append(Report.fmt(t.p50Ms())).append(" ms");
      } else if (firstError == null) {
        firstError = "k=" + k + ": " + t.outcome().error();
      }
    }
    if (profile.isEmpty()) {
      return new Planned(List.of(), batch, "nothing measured; " + firstError);
    }
    GroupingPlan plan = GroupingPlanner.plan(new GroupingProblem(
        model.name(), host.usableCores(), Long.MAX_VALUE / 4, batch, profile, 0, 0, null, GroupingObjective.THROUGHPUT));
    return new Planned(plan.choice() == null ? List.of() : plan.choice().sizes(), batch, measured.toString());
  }
}

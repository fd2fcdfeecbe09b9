package io.partita.planning.mapping;

import io.partita.planning.Tolerance;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Brute force for mapping: every assignment of every (service, model) to a resource that can run it. */
final class MappingOracle {
  private MappingOracle() {}

  record Best(double cost, double latency, long assignments) {}

  static Best best(MappingProblem problem) {
    List<double[]> work = new ArrayList<>();
    List<double[]> time = new ArrayList<>();
    List<ResourceSpec> resources = problem.resources();
    for (ServiceSpec s : problem.services()) {
      for (ServiceStage st : s.stages()) {
        Map<String, Double> row = problem.latencyMs().getOrDefault(st.modelId(), Map.of());
        double[] w = new double[resources.size()];
        double[] t = new double[resources.size()];
        for (int r = 0; r < resources.size(); r++) {
          Double v = row.get(resources.get(r).id());
          t[r] = v == null ? Double.NaN : v;
          w[r] = v == null ? Double.NaN : v * st.requestsPerSecond();
        }
        work.add(w);
        time.add(t);
      }
    }
    double[] best = {Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY};
    long[] count = {0};
    walk(0, new double[resources.size()], 0, work, time, best, count);
    return new Best(best[0], best[1], count[0]);
  }

  private static void walk(int i, double[] load, double latency, List<double[]> work, List<double[]> time,
      double[] best, long[] count) {
    if (i == work.size()) {
      count[0]++;
      double cost = 0;
      for (double l : load) {
        cost = Math.max(cost, l);
      }
      int c = Tolerance.compare(cost, best[0]);
      if (c < 0 || (c == 0 && Tolerance.compare(latency, best[1]) < 0)) {
        best[0] = cost;
        best[1] = latency;
      }
      return;
    }
    for (int r = 0; r < load.length; r++) {
      if (Double.isNaN(work.get(i)[r])) {
        continue;
      }
      load[r] += work.get(i)[r];
      walk(i + 1, load, latency + time.get(i)[r], work, time, best, count);
      load[r] -= work.get(i)[r];
    }
  }
}

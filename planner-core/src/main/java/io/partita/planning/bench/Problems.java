package io.partita.planning.bench;

import io.partita.planning.ProfilePoint;
import io.partita.planning.grouping.GroupingObjective;
import io.partita.planning.grouping.GroupingProblem;
import io.partita.planning.mapping.MappingProblem;
import io.partita.planning.mapping.ResourceSpec;
import io.partita.planning.mapping.ServiceSpec;
import io.partita.planning.mapping.ServiceStage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;

/**
 * Seeded synthetic problems shared by the JMH benchmarks, the gap evaluation and {@code ./partita
 * bench}. Not used by the planners themselves.
 */
public final class Problems {
  private Problems() {}

  /**
   * A pool of {@code n} resources with {@code count} measured sizes spread geometrically from 1 to
   * {@code n}, latency {@code 100 / k^0.8} ms with +-10% noise (sublinear speed-up, as measured on
   * real CPUs), memory 1 MB + 10 kB per resource.
   */
  public static GroupingProblem grouping(int n, int count, long buffer, long threshold, long poolMemory, long seed) {
    Random random = new Random(seed);
    TreeSet<Integer> sizes = new TreeSet<>();
    for (int i = 0; i < count; i++) {
      int k = Math.max(1, (int) Math.round(Math.pow(n, (double) i / (count - 1))));
      while (sizes.contains(k)) {
        k++;
      }
      sizes.add(k);
    }
    List<ProfilePoint> profile = new ArrayList<>();
    for (int k : sizes) {
      double t = 100.0 / Math.pow(k, 0.8) * (0.9 + 0.2 * random.nextDouble());
      profile.add(new ProfilePoint(k, t, 1_000_000L + 10_000L * k));
    }
    return new GroupingProblem("bench", n, poolMemory, 1, profile, buffer, threshold, null,
        GroupingObjective.THROUGHPUT);
  }

  /**
   * {@code models} models in services of up to {@code perService} models, on {@code resources}
   * resources (a quarter GPUs, the rest CPU partitions). GPU times are a base of 1..50 ms, CPU
   * times 2..10x that; 20% of the CPU cells are missing (model does not run there).
   */
  public static MappingProblem mapping(int models, int resources, int perService, long seed, int exactMax) {
    Random r = new Random(seed);
    List<ResourceSpec> res = new ArrayList<>();
    int gpus = Math.max(1, resources / 4);
    for (int i = 0; i < resources; i++) {
      res.add(new ResourceSpec(String.format("r%03d", i), i < gpus ? "gpu" : "cpu"));
    }
    Map<String, Map<String, Double>> matrix = new LinkedHashMap<>();
    List<ServiceSpec> services = new ArrayList<>();
    List<ServiceStage> stages = new ArrayList<>();
    for (int m = 0; m < models; m++) {
      String id = String.format("m%03d", m);
      Map<String, Double> row = new LinkedHashMap<>();
      double base = 1 + r.nextInt(50);
      for (int i = 0; i < resources; i++) {
        if (i < gpus) {
          row.put(res.get(i).id(), base * (0.8 + 0.4 * r.nextDouble()));
        } else if (r.nextInt(5) > 0) {
          row.put(res.get(i).id(), base * (2 + 8 * r.nextDouble()));
        }
      }
      matrix.put(id, row);
      stages.add(new ServiceStage(id, 1 + r.nextInt(20)));
      if (stages.size() == perService || m == models - 1) {
        services.add(new ServiceSpec(String.format("s%03d", services.size()), stages));
        stages = new ArrayList<>();
      }
    }
    return new MappingProblem(res, matrix, services, exactMax, exactMax);
  }
}

package io.partita.planning.mapping;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * A {@link MappingProblem} as the mapping methods work on it: resources by index, each service's
 * models with their row of times, services in planning order (demand descending, ties by id), and
 * one error per model that can run nowhere. Shared by the heuristic ({@link MappingPlanner}) and
 * the exact search ({@link ExactMappingSearch}) so both read the problem the same way.
 */
record PreparedMapping(List<ResourceSpec> resources, List<Service> services, List<String> errors) {

  /**
   * One (service, model) to place; {@code time[r]} is NaN where it cannot run; {@code capacity[r]}
   * the units of resource {@code r} (shared by all items).
   */
  record Item(String serviceId, String modelId, double rate, double[] time, double minTime,
      double secondTime, double[] capacity, double[] work) {
    Item(String serviceId, String modelId, double rate, double[] time, double minTime, double secondTime,
        double[] capacity) {
      this(serviceId, modelId, rate, time, minTime, secondTime, capacity, works(rate, time, capacity));
    }

    /**
     * Each resource's {@code rate * T / capacity}, computed once: the improvement pass asks for it
     * hundreds of millions of times on large problems (the same value each time).
     */
    private static double[] works(double rate, double[] time, double[] capacity) {
      double[] w = new double[time.length];
      for (int r = 0; r < time.length; r++) {
        w[r] = capacity[r] == 1 ? rate * time[r] : rate * time[r] / capacity[r];
      }
      return w;
    }

    boolean runs(int r) {
      return !Double.isNaN(time[r]);
    }

    /** Busy ms per second of each unit of {@code r}: {@code rate * T / capacity}. */
    double work(int r) {
      return work[r];
    }

    double weight() {
      return rate * minTime;
    }
  }

  record Service(String id, List<Item> items, double demand) {}

  int resourceCount() {
    return resources.size();
  }

  List<Item> allItems() {
    List<Item> all = new ArrayList<>();
    services.forEach(s -> all.addAll(s.items()));
    return all;
  }

  static PreparedMapping of(MappingProblem problem) {
    List<ResourceSpec> resources = problem.resources();
    int rc = resources.size();
    double[] capacity = new double[rc];
    for (int r = 0; r < rc; r++) {
      capacity[r] = resources.get(r).capacity();
    }
    List<String> errors = new ArrayList<>();
    List<Service> services = new ArrayList<>();
    for (ServiceSpec spec : problem.services()) {
      List<Item> items = new ArrayList<>();
      double demand = 0;
      for (ServiceStage stage : spec.stages()) {
        Map<String, Double> row = problem.latencyMs().getOrDefault(stage.modelId(), Map.of());
        double[] time = new double[rc];
        double best = Double.POSITIVE_INFINITY;
        double second = Double.POSITIVE_INFINITY;
        for (int r = 0; r < rc; r++) {
          Double t = row.get(resources.get(r).id());
          time[r] = t == null ? Double.NaN : t;
          if (t != null) {
            if (t < best) {
              second = best;
              best = t;
            } else if (t < second) {
              second = t;
            }
          }
        }
        if (best == Double.POSITIVE_INFINITY) {
          errors.add("model " + stage.modelId() + " of service " + spec.id()
              + " can run on no resource: the timing matrix has no entry for it");
          continue;
        }
        items.add(new Item(spec.id(), stage.modelId(), stage.requestsPerSecond(), time, best, second, capacity));
        demand += stage.requestsPerSecond() * best;
      }
      services.add(new Service(spec.id(), items, demand));
    }
    services.sort(Comparator.comparingDouble(Service::demand).reversed().thenComparing(Service::id));
    return new PreparedMapping(resources, services, errors);
  }
}

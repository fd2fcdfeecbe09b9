package io.partita.planning.mapping;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The input of {@link MappingPlanner}: the resources, the timing matrix {@code T[m][r]} in ms (a
 * missing entry means "cannot run there") and the services.
 *
 * @param resources at least two resource kinds among them
 * @param latencyMs {@code latencyMs.get(model).get(resource)}; every value finite and {@code > 0}
 * @param services the services to map; a model may serve several services
 * @param exactMaxPlacements the exact optimum is computed only for at most this many (service,
 *     model) placements
 * @param exactMaxResources ... and at most this many resources
 */
public record MappingProblem(
    List<ResourceSpec> resources,
    Map<String, Map<String, Double>> latencyMs,
    List<ServiceSpec> services,
    int exactMaxPlacements,
    int exactMaxResources) {

  /** Default bound of the exact optimum: 10 placements on at most 8 resources. */
  public static final int DEFAULT_EXACT_MAX_PLACEMENTS = 10;

  public static final int DEFAULT_EXACT_MAX_RESOURCES = 8;

  public MappingProblem {
    if (resources == null || resources.isEmpty()) {
      throw new IllegalArgumentException("resources: must hold at least one resource");
    }
    Set<String> ids = new HashSet<>();
    Set<String> kinds = new HashSet<>();
    for (ResourceSpec r : resources) {
      if (!ids.add(r.id())) {
        throw new IllegalArgumentException("resources: " + r.id() + " is given twice");
      }
      kinds.add(r.kind());
    }
    if (kinds.size() < 2) {
      throw new IllegalArgumentException("resources: must span at least two kinds, found " + kinds);
    }
    Map<String, Map<String, Double>> copy = new TreeMap<>();
    for (Map.Entry<String, Map<String, Double>> row : latencyMs.entrySet()) {
      Map<String, Double> cells = new TreeMap<>();
      for (Map.Entry<String, Double> cell : row.getValue().entrySet()) {
        if (!ids.contains(cell.getKey())) {
          throw new IllegalArgumentException("timings." + row.getKey() + "." + cell.getKey()
              + ": unknown resource");
        }
        Double v = cell.getValue();
        if (v != null) {
          if (!(v > 0) || v.isInfinite()) {
            throw new IllegalArgumentException("timings." + row.getKey() + "." + cell.getKey()
                + ": must be a finite number > 0, was " + v);
          }
          cells.put(cell.getKey(), v);
        }
      }
      copy.put(row.getKey(), Map.copyOf(cells));
    }
    latencyMs = Collections.unmodifiableMap(copy);
    if (services == null || services.isEmpty()) {
      throw new IllegalArgumentException("services: must hold at least one service");
    }
    Set<String> serviceIds = new HashSet<>();
    for (ServiceSpec s : services) {
      if (!serviceIds.add(s.id())) {
        throw new IllegalArgumentException("services: " + s.id() + " is given twice");
      }
    }
    if (exactMaxPlacements < 0 || exactMaxResources < 0) {
      throw new IllegalArgumentException("exact bounds: must be >= 0");
    }
    List<ResourceSpec> sortedResources = new ArrayList<>(resources);
    sortedResources.sort(Comparator.comparing(ResourceSpec::id));
    resources = List.copyOf(sortedResources);
    List<ServiceSpec> sortedServices = new ArrayList<>(services);
    sortedServices.sort(Comparator.comparing(ServiceSpec::id));
    services = List.copyOf(sortedServices);
  }

  /**
   * Whether this problem is {@code earlier} drifted by at most {@code drift} (relative) in every
   * figure: the same resources (ids and kinds) with capacities, the same services with the same
   * models, each rate, and the same cells of the matrix, each time. A figure drifts by
   * {@code |now / then - 1|}; a rate that was 0 must still be 0. Such a problem changes the cost of
   * any mapping by at most a factor {@link #driftFactor}: the planner keeps a mapping planned on
   * {@code earlier} without planning afresh while today's problem stays within the drift of it.
   */
  public boolean within(MappingProblem earlier, double drift) {
    if (resources.size() != earlier.resources.size() || services.size() != earlier.services.size()
        || !latencyMs.keySet().equals(earlier.latencyMs.keySet())) {
      return false;
    }
    for (int i = 0; i < resources.size(); i++) {
      ResourceSpec now = resources.get(i);
      ResourceSpec then = earlier.resources.get(i);
      if (!now.id().equals(then.id()) || !now.kind().equals(then.kind()) || !close(now.capacity(), then.capacity(), drift)) {
        return false;
      }
    }
    for (int i = 0; i < services.size(); i++) {
      ServiceSpec now = services.get(i);
      ServiceSpec then = earlier.services.get(i);
      if (!now.id().equals(then.id()) || now.stages().size() != then.stages().size()) {
        return false;
      }
      for (int j = 0; j < now.stages().size(); j++) {
        ServiceStage a = now.stages().get(j);
        ServiceStage b = then.stages().get(j);
        if (!a.modelId().equals(b.modelId()) || !close(a.requestsPerSecond(), b.requestsPerSecond(), drift)) {
          return false;
        }
      }
    }
    for (Map.Entry<String, Map<String, Double>> row : latencyMs.entrySet()) {
      Map<String, Double> then = earlier.latencyMs.get(row.getKey());
      if (!row.getValue().keySet().equals(then.keySet())) {
        return false;
      }
      for (Map.Entry<String, Double> cell : row.getValue().entrySet()) {
        if (!close(cell.getValue(), then.get(cell.getKey()), drift)) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The most any mapping's cost (its bottleneck load, {@code rate * time / capacity} summed per
   * resource) can grow by from a problem to one {@link #within} {@code drift} of it: each of rate
   * and time by {@code 1 + drift}, capacity shrunk by {@code 1 - drift}. With {@code drift}
   * negated, the least it can shrink to.
   */
  public static double driftFactor(double drift) {
    return (1 + drift) * (1 + drift) / (1 - drift);
  }

  private static boolean close(double now, double then, double drift) {
    if (then == 0) {
      return now == 0;
    }
    return Math.abs(now / then - 1) <= drift;
  }

  /** A problem with the default bounds of the exact optimum. */
  public MappingProblem(List<ResourceSpec> resources, Map<String, Map<String, Double>> latencyMs,
      List<ServiceSpec> services) {
    this(resources, latencyMs, services, DEFAULT_EXACT_MAX_PLACEMENTS, DEFAULT_EXACT_MAX_RESOURCES);
  }
}

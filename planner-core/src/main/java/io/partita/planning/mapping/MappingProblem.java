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

  /** A problem with the default bounds of the exact optimum. */
  public MappingProblem(List<ResourceSpec> resources, Map<String, Map<String, Double>> latencyMs,
      List<ServiceSpec> services) {
    this(resources, latencyMs, services, DEFAULT_EXACT_MAX_PLACEMENTS, DEFAULT_EXACT_MAX_RESOURCES);
  }
}

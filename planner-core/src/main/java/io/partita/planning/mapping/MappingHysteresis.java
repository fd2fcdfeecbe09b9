package io.partita.planning.mapping;

import io.partita.planning.Hysteresis;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@link Hysteresis} for the mapping of models to resources: the running mapping stays unless the
 * fresh one lowers the bottleneck by more than the margin. Pure.
 */
public final class MappingHysteresis {

  private MappingHysteresis() {}

  /** {@link MappingPlan.Improvement#improvedFrom()} of a plan that kept the running mapping. */
  public static final String KEPT_MAPPING = "kept (hysteresis)";

  /**
   * The mapping to run: {@code fresh}, unless {@code incumbent} (resource per service and model,
   * keys {@code service + "/" + model}) still places exactly the problem's models, each on a
   * resource that can run it, and the fresh mapping's bottleneck is not lower than the
   * incumbent's on today's times by more than the margin; then the incumbent mapping with its
   * loads on today's problem, {@code improvedFrom} {@link #KEPT_MAPPING}. The fresh plan's schemes
   * and exact optimum stay as they are (the gap is the incumbent's cost over the optimum's).
   */
  public static MappingPlan keepMapping(MappingProblem problem, MappingPlan fresh, Map<String, String> incumbent,
      double margin) {
    if (incumbent == null || incumbent.isEmpty() || !fresh.planned() || incumbent.size() != fresh.assignments().size()) {
      return fresh;
    }
    Map<String, ResourceSpec> resources = new HashMap<>();
    problem.resources().forEach(r -> resources.put(r.id(), r));
    Map<String, Double> rates = new HashMap<>();
    problem.services().forEach(s -> s.stages().forEach(st -> rates.put(s.id() + "/" + st.modelId(), st.requestsPerSecond())));
    Map<String, Double> loads = new TreeMap<>();
    List<Assignment> kept = new ArrayList<>();
    boolean same = true;
    for (Assignment a : fresh.assignments()) {
      String key = a.serviceId() + "/" + a.modelId();
      String r = incumbent.get(key);
      ResourceSpec spec = r == null ? null : resources.get(r);
      Double t = spec == null ? null : problem.latencyMs().getOrDefault(a.modelId(), Map.of()).get(r);
      if (t == null) {
        return fresh;
      }
      double load = rates.getOrDefault(key, 0.0) * t / spec.capacity();
      loads.merge(r, load, Double::sum);
      kept.add(new Assignment(a.serviceId(), a.modelId(), r, t, load));
      same &= r.equals(a.resourceId());
    }
    double cost = 0;
    for (double l : loads.values()) {
      cost = Math.max(cost, l);
    }
    if (same || Hysteresis.replacesLower(cost, fresh.costMsPerSecond(), margin)) {
      return fresh;
    }
    List<ResourceLoad> resourceLoads = new ArrayList<>();
    for (ResourceLoad l : fresh.loads()) {
      resourceLoads.add(new ResourceLoad(l.resourceId(), l.kind(), loads.getOrDefault(l.resourceId(), 0.0)));
    }
    double latency = kept.stream().mapToDouble(Assignment::latencyMs).sum();
    ExactMapping exact = fresh.exact();
    if (exact != null && exact.computed()) {
      exact = exact.withGap(exact.costMsPerSecond() > 0 ? cost / exact.costMsPerSecond() : 1.0);
    }
    return new MappingPlan(true, fresh.errors(), fresh.services(), new MappingPlan.Improvement(
        fresh.improvement().schemesCostMsPerSecond(), KEPT_MAPPING, 0), kept, resourceLoads, cost, latency, exact);
  }
}

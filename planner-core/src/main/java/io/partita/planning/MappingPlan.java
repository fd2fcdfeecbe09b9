package io.partita.planning;

import java.util.List;

/**
 * The result of {@link MappingPlanner#plan}.
 *
 * @param planned false when a model can run nowhere; {@code errors} then names it
 * @param errors one line per model that can run nowhere
 * @param services one per service, in the order they were planned (highest demand first)
 * @param assignments the chosen mapping of every service model
 * @param loads the resulting load on every resource
 * @param costMsPerSecond the bottleneck {@code max_r load_r}
 * @param pipelineLatencyMs summed latency along all services' pipelines
 * @param exact the exact optimum and the gap to it, or why it was not computed
 */
public record MappingPlan(
    boolean planned,
    List<String> errors,
    List<ServiceMapping> services,
    List<Assignment> assignments,
    List<ResourceLoad> loads,
    double costMsPerSecond,
    double pipelineLatencyMs,
    ExactMapping exact) {
  public MappingPlan {
    errors = List.copyOf(errors);
    services = List.copyOf(services);
    assignments = List.copyOf(assignments);
    loads = List.copyOf(loads);
  }
}

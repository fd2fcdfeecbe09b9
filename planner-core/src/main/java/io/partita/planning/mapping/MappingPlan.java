package io.partita.planning.mapping;

import java.util.List;

/**
 * The result of {@link MappingPlanner#plan}.
 *
 * @param planned false when a model can run nowhere; {@code errors} then names it
 * @param errors one line per model that can run nowhere
 * @param services one per service, in the order they were planned (highest demand first)
 * @param improvement what the improvement pass started from and did
 * @param assignments the final mapping of every service model, in planning order
 * @param loads the resulting load on every resource
 * @param costMsPerSecond the bottleneck {@code max_r load_r}
 * @param pipelineLatencyMs summed latency along all services' pipelines
 * @param exact the exact optimum and the gap to it, or why it was not computed
 */
public record MappingPlan(
    boolean planned,
    List<String> errors,
    List<ServiceMapping> services,
    Improvement improvement,
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

  /**
   * The improvement pass of a plan.
   *
   * @param schemesCostMsPerSecond the bottleneck of the schemes' chosen mappings, before the pass
   * @param improvedFrom the starting point of the pass that gave the plan ({@code per-service
   *     choice}, {@code model-first for every service}, {@code hardware-first for every service},
   *     {@code model-first over all services at once}), or {@code none}
   * @param improvementSteps how many moves or swaps the pass applied to it
   */
  public record Improvement(double schemesCostMsPerSecond, String improvedFrom, int improvementSteps) {
    static final Improvement NONE = new Improvement(0, "none", 0);
  }
}

package io.partita.planning.mapping;

import java.util.List;

/**
 * One scheme's mapping of one service (or of all services, see {@link MappingPlanner#runScheme}).
 *
 * @param scheme which scheme made it
 * @param assignments in pipeline order
 * @param costMsPerSecond the bottleneck load {@code max_r load_r} over all resources, counting the
 *     load of services placed before
 * @param pipelineLatencyMs {@code sum} of {@code T[m][r(m)]} along the pipeline(s): the tie-break
 */
public record SchemeMapping(
    MappingScheme scheme, List<Assignment> assignments, double costMsPerSecond, double pipelineLatencyMs) {
  public SchemeMapping {
    assignments = List.copyOf(assignments);
  }
}

package io.partita.planning.allocation;

import java.util.List;

/**
 * The result of {@link InstanceAllocator#allocate}.
 *
 * @param placements every placed instance, by service model id then instance number
 * @param unplaced per service model that could not get all its instances, how many are missing
 *     and why
 * @param excluded slots that could not take a service model's instance, and why
 */
public record AllocationPlan(
    List<InstancePlacement> placements, List<Unplaced> unplaced, List<SlotExclusion> excluded) {
  public AllocationPlan {
    placements = List.copyOf(placements);
    unplaced = List.copyOf(unplaced);
    excluded = List.copyOf(excluded);
  }

  /** Instances of a service model that found no slot. */
  public record Unplaced(String serviceModelId, int missing, String reason) {}
}

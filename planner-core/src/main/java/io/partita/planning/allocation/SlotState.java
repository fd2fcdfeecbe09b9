package io.partita.planning.allocation;

import java.util.List;

/**
 * What a worker's slot offers: where it is, the base model its session runs, what is mounted on it,
 * how much of its memory budget is left and whether it is healthy.
 *
 * @param instances how many model instances it already serves (its load)
 */
public record SlotState(
    String slotId,
    String host,
    String baseModel,
    long memoryLeftBytes,
    boolean healthy,
    int instances,
    List<MountedWeight> mounted) {
  public SlotState {
    mounted = List.copyOf(mounted);
  }
}

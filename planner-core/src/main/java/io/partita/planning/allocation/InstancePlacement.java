package io.partita.planning.allocation;

import java.util.List;

/**
 * One instance of a service model allocated to a slot.
 *
 * @param mountNeeded whether the slot must mount the weight file first
 * @param unmountFirst weight files to unmount on that slot before mounting (LRU, unused)
 * @param why the preference that decided it
 */
public record InstancePlacement(
    String serviceModelId,
    int instance,
    String slotId,
    String host,
    boolean mountNeeded,
    List<WeightFile> unmountFirst,
    String why) {
  public InstancePlacement {
    unmountFirst = List.copyOf(unmountFirst);
  }
}

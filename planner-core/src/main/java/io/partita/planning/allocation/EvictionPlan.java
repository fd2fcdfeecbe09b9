package io.partita.planning.allocation;

import java.util.List;

/**
 * Which weight files to unmount from one slot to free memory.
 *
 * @param unmount the files to unmount, in order (least recently used first)
 * @param freedBytes what they free
 * @param sufficient whether {@code memory left + freed >= needed}
 * @param kept the mounted files not unmounted, each with why (in use, or not needed)
 */
public record EvictionPlan(List<WeightFile> unmount, long freedBytes, boolean sufficient, List<Kept> kept) {
  public EvictionPlan {
    unmount = List.copyOf(unmount);
    kept = List.copyOf(kept);
  }

  /** A mounted file that stays, and why. */
  public record Kept(String sha256, String reason) {}
}

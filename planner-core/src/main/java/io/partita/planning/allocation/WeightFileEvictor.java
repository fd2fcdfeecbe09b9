package io.partita.planning.allocation;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Chooses the weight files to unmount from a slot whose memory budget is exceeded
 * (docs/concepts.md, method 3).
 *
 * <p><b>Rule.</b> Candidates are the mounted files that no instance uses, in order of
 * {@code lastUsedSequence} ascending (least recently used first; ties by sha256). They are taken
 * one by one until {@code memoryLeft + freed >= needed}; then it stops, so no file is unmounted that
 * was not needed. A file in use is never unmounted.
 *
 * <p><b>Guarantees.</b> The result is the shortest LRU prefix that suffices; when even unmounting
 * every unused file is not enough, {@code sufficient} is false and nothing should be unmounted
 * (the list still says what would have been).
 */
public final class WeightFileEvictor {

  private WeightFileEvictor() {}

  /**
   * @param mounted what the slot holds
   * @param memoryLeftBytes the slot's free budget now (negative when already over it)
   * @param neededBytes what must be free afterwards (0 to only get back within budget)
   */
  public static EvictionPlan chooseUnmounts(List<MountedWeight> mounted, long memoryLeftBytes,
      long neededBytes) {
    List<MountedWeight> order = new ArrayList<>(mounted);
    order.sort(Comparator.comparingLong(MountedWeight::lastUsedSequence)
        .thenComparing(m -> m.file().sha256()));
    List<WeightFile> unmount = new ArrayList<>();
    List<EvictionPlan.Kept> kept = new ArrayList<>();
    long freed = 0;
    for (MountedWeight m : order) {
      if (m.inUse()) {
        kept.add(new EvictionPlan.Kept(m.file().sha256(), "in use by an instance"));
      } else if (memoryLeftBytes + freed >= neededBytes) {
        kept.add(new EvictionPlan.Kept(m.file().sha256(), "not needed: enough memory already freed"));
      } else {
        unmount.add(m.file());
        freed += m.file().sizeBytes();
      }
    }
    return new EvictionPlan(unmount, freed, memoryLeftBytes + freed >= neededBytes, kept);
  }
}

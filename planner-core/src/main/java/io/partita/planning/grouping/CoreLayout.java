package io.partita.planning.grouping;

import io.partita.planning.Hysteresis;
import java.util.ArrayList;
import java.util.List;

/**
 * Lays partitions out on the resources of one pool (CPU ids or GPU indices, by position).
 *
 * <p>Partitions that may not overlap ({@code exclusive}) take consecutive positions from 0 in the
 * order given, as they always did. The others (a model the split could not give resources of its
 * own, a default partition on a full pool) go where they fit first, and once the pool is used up,
 * on the window of {@code size} consecutive positions whose busiest position carries the least
 * load (ties: the lower position), so several models share pinned resources in proportion to what
 * they ask of them. The load of a partition is its {@code weight}: the caller's measure of how much
 * work it brings (demand times measured time per item).
 *
 * <p>Deterministic; every position returned is inside the pool.
 */
public final class CoreLayout {

  private CoreLayout() {}

  /**
   * A partition to place.
   *
   * @param size resources it needs, {@code 1..poolSize}
   * @param weight its load, {@code >= 0}
   * @param exclusive whether it must have its resources to itself
   */
  public record Block(int size, double weight, boolean exclusive) {
    public Block {
      if (size <= 0) {
        throw new IllegalArgumentException("size: must be > 0, was " + size);
      }
      if (!(weight >= 0)) {
        throw new IllegalArgumentException("weight: must be >= 0, was " + weight);
      }
    }
  }

  /**
   * As {@link #place(int, List)}, keeping the running layout: {@code running} gives the first
   * position of each block in the layout that runs now (the same blocks in the same order, or
   * null). It stays when its exclusive blocks are where they would go and the fresh layout does not
   * lower the load of the busiest position, with today's weights, by more than {@code margin}
   * ({@link Hysteresis#replacesLower}): weights follow measured times, and a few percent of noise
   * in them would otherwise move shared partitions from core to core on every re-plan.
   */
  public static List<Integer> place(int poolSize, List<Block> blocks, List<Integer> running, double margin) {
    List<Integer> fresh = place(poolSize, blocks);
    if (running == null || running.size() != blocks.size() || running.equals(fresh)) {
      return fresh;
    }
    for (int i = 0; i < blocks.size(); i++) {
      Integer at = running.get(i);
      Block b = blocks.get(i);
      if (at == null || at < 0 || at + Math.min(b.size(), poolSize) > poolSize
          || (b.exclusive() && !at.equals(fresh.get(i)))) {
        return fresh;
      }
    }
    if (Hysteresis.replacesLower(busiest(poolSize, blocks, running), busiest(poolSize, blocks, fresh), margin)) {
      return fresh;
    }
    return List.copyOf(running);
  }

  /** The load of the busiest position when the blocks start at {@code firsts}. */
  static double busiest(int poolSize, List<Block> blocks, List<Integer> firsts) {
    double[] load = new double[poolSize];
    boolean[] used = new boolean[poolSize];
    for (int i = 0; i < blocks.size(); i++) {
      mark(load, used, firsts.get(i), blocks.get(i));
    }
    double max = 0;
    for (double l : load) {
      max = Math.max(max, l);
    }
    return max;
  }

  /**
   * The first position of each block, in the order given; a block larger than the pool is clamped
   * to start at 0.
   */
  public static List<Integer> place(int poolSize, List<Block> blocks) {
    if (poolSize <= 0) {
      throw new IllegalArgumentException("poolSize: must be > 0, was " + poolSize);
    }
    double[] load = new double[poolSize];
    boolean[] used = new boolean[poolSize];
    Integer[] first = new Integer[blocks.size()];
    int next = 0;
    for (int i = 0; i < blocks.size(); i++) {
      Block b = blocks.get(i);
      if (b.exclusive()) {
        first[i] = Math.min(next, Math.max(0, poolSize - b.size()));
        next += b.size();
        mark(load, used, first[i], b);
      }
    }
    for (int i = 0; i < blocks.size(); i++) {
      Block b = blocks.get(i);
      if (b.exclusive()) {
        continue;
      }
      int size = Math.min(b.size(), poolSize);
      int best = -1;
      boolean bestFree = false;
      double bestLoad = Double.POSITIVE_INFINITY;
      for (int start = 0; start + size <= poolSize; start++) {
        boolean free = true;
        double max = 0;
        for (int k = start; k < start + size; k++) {
          free &= !used[k];
          max = Math.max(max, load[k]);
        }
        if (best < 0 || (free && !bestFree) || (free == bestFree && max < bestLoad)) {
          best = start;
          bestFree = free;
          bestLoad = max;
        }
      }
      first[i] = best;
      mark(load, used, best, b);
    }
    List<Integer> out = new ArrayList<>();
    for (Integer f : first) {
      out.add(f);
    }
    return out;
  }

  private static void mark(double[] load, boolean[] used, int first, Block b) {
    for (int k = first; k < first + b.size() && k < load.length; k++) {
      load[k] += b.weight();
      used[k] = true;
    }
  }
}

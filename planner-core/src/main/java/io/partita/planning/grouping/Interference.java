package io.partita.planning.grouping;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * How much partitions running together on one pool of one host deviate from the sum of their
 * single-size points: a factor {@code f(p)} by the number of partitions {@code p}, learnt from the
 * grouping-mode measurements made there ({@link InterferenceSample}).
 *
 * <ul>
 *   <li>At a measured partition count {@code p}: the geometric mean of {@code measured / predicted}
 *       over the samples with {@code p} partitions (a geometric mean, because the ratios multiply a
 *       prediction: a grouping measured at 2x and one at 0.5x average to 1).
 *   <li>{@code f(1) = 1} unless one-partition groupings were measured: a single partition measured
 *       alone is what the single-size point already is.
 *   <li>Between two anchors, linear in {@code p}; above the largest anchor, that anchor's factor
 *       (the interference of more partitions is not extrapolated).
 * </ul>
 *
 * No sample at all: {@code f(p) = 1} everywhere, the prediction is used as it is. Pure; the order of
 * the samples does not change the factors.
 */
public final class Interference {
  private static final Interference NONE = new Interference(new TreeMap<>());

  /** p -> factor at the measured partition counts (always holds 1 unless p = 1 was measured). */
  private final SortedMap<Integer, Double> anchors;

  private Interference(SortedMap<Integer, Double> anchors) {
    this.anchors = Collections.unmodifiableSortedMap(anchors);
  }

  /** No correction. */
  public static Interference none() {
    return NONE;
  }

  public static Interference of(List<InterferenceSample> samples) {
    if (samples.isEmpty()) {
      return NONE;
    }
    SortedMap<Integer, List<Double>> logs = new TreeMap<>();
    for (InterferenceSample s : samples) {
      logs.computeIfAbsent(s.partitions(), p -> new ArrayList<>()).add(Math.log(s.ratio()));
    }
    SortedMap<Integer, Double> anchors = new TreeMap<>();
    anchors.put(1, 1.0);
    for (Map.Entry<Integer, List<Double>> e : logs.entrySet()) {
      List<Double> sorted = new ArrayList<>(e.getValue());
      Collections.sort(sorted); // summed in one order whatever the input order
      double sum = 0;
      for (double v : sorted) {
        sum += v;
      }
      anchors.put(e.getKey(), Math.exp(sum / sorted.size()));
    }
    return new Interference(anchors);
  }

  /** Whether no grouping-mode measurement informs this pool (every factor is 1). */
  public boolean isEmpty() {
    return anchors.isEmpty();
  }

  /** The measured anchors, partitions -> factor. */
  public SortedMap<Integer, Double> anchors() {
    return anchors;
  }

  /** {@code f(p)}, the factor a prediction of {@code p} partitions is multiplied by. */
  public double factor(int partitions) {
    if (anchors.isEmpty()) {
      return 1.0;
    }
    Double exact = anchors.get(partitions);
    if (exact != null) {
      return exact;
    }
    SortedMap<Integer, Double> below = anchors.headMap(partitions);
    SortedMap<Integer, Double> above = anchors.tailMap(partitions);
    if (below.isEmpty()) {
      return above.get(above.firstKey());
    }
    int lo = below.lastKey();
    if (above.isEmpty()) {
      return below.get(lo);
    }
    int hi = above.firstKey();
    double t = (partitions - lo) / (double) (hi - lo);
    return below.get(lo) + t * (above.get(hi) - below.get(lo));
  }

  @Override
  public String toString() {
    return "Interference" + anchors;
  }
}

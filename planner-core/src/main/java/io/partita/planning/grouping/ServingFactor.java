package io.partita.planning.grouping;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What serving costs on one pool, as the running grouping shows it: its figure measured from
 * serving over its idle figure. Serving figures hold serving's own costs (a per-row LoRA graph
 * larger than the one profiled, the cores the gateway, the broker and a job's producers take from
 * the slots under load), which idle figures (the profiler's, and predictions from its single-size
 * points) do not. Comparing the running grouping by what it served with alternatives by their idle
 * figures would compare unlike things and switch away from the running grouping under load for no
 * other reason; so an alternative with only an idle or predicted figure is multiplied by this
 * factor ({@link MeasuredGroupings#assess}), and a switch needs the alternative to be better under
 * the same serving conditions. Pure.
 *
 * @param sizes the running grouping the factor was read from (sorted descending); empty for {@link #none()}
 * @param servedPerSecond its figure measured from serving
 * @param idlePerSecond its idle figure: the profiler's grouping-mode measurement when there is one,
 *     else its prediction times the pool's interference factor
 * @param idleMeasured whether {@code idlePerSecond} was measured by the profiler (else predicted)
 */
public record ServingFactor(List<Integer> sizes, double servedPerSecond, double idlePerSecond, boolean idleMeasured) {
  private static final ServingFactor NONE = new ServingFactor(List.of(), 1, 1, false);

  public ServingFactor {
    sizes = List.copyOf(sizes);
    if (!(servedPerSecond > 0) || Double.isInfinite(servedPerSecond)) {
      throw new IllegalArgumentException("servedPerSecond: must be a finite number > 0, was " + servedPerSecond);
    }
    if (!(idlePerSecond > 0) || Double.isInfinite(idlePerSecond)) {
      throw new IllegalArgumentException("idlePerSecond: must be a finite number > 0, was " + idlePerSecond);
    }
  }

  /** No serving figure of the running grouping: idle figures are compared as they are. */
  public static ServingFactor none() {
    return NONE;
  }

  /** Whether a running grouping's serving figure sets the factor. */
  public boolean applies() {
    return !sizes.isEmpty();
  }

  /** {@code served / idle}; 1 when it does not apply. */
  public double factor() {
    return applies() ? servedPerSecond / idlePerSecond : 1.0;
  }

  /**
   * The figure each measured grouping is compared by, before the factor: when the factor applies,
   * a grouping's serving figure (it is under the serving conditions already), else its profiler
   * figure (scaled later); when it does not apply, the profiler's figure (idle, like every
   * prediction), else the serving one.
   *
   * @param profiled the profiler's grouping-mode measurements, by sizes
   * @param served the measurements from serving, by sizes
   */
  public Map<List<Integer>, GroupingMeasurement> compared(Map<List<Integer>, GroupingMeasurement> profiled,
      Map<List<Integer>, GroupingMeasurement> served) {
    Map<List<Integer>, GroupingMeasurement> out = new HashMap<>(applies() ? profiled : served);
    out.putAll(applies() ? served : profiled);
    return out;
  }
}

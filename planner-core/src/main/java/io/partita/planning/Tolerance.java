package io.partita.planning;

/**
 * The one comparison of planned figures: values within a relative 1e-9 tie.
 *
 * <p>Public only so that the method packages beside this one (grouping, mapping, version) compare
 * figures the same way; it is no part of what the planner offers to callers.
 */
public final class Tolerance {
  /** Two figures closer than this fraction of the larger (at least 1) are a tie. */
  public static final double RELATIVE = 1e-9;

  private Tolerance() {}

  /** As {@link Double#compare}, with values within {@link #RELATIVE} of each other equal. */
  public static int compare(double a, double b) {
    if (a == b) {
      return 0;
    }
    if (Double.isInfinite(a) || Double.isInfinite(b)) {
      return Double.compare(a, b);
    }
    double scale = Math.max(1.0, Math.max(Math.abs(a), Math.abs(b)));
    if (Math.abs(a - b) <= RELATIVE * scale) {
      return 0;
    }
    return a < b ? -1 : 1;
  }
}

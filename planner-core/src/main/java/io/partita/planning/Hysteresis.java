package io.partita.planning;

/**
 * Keeps a plan that is already running unless a new one is better by more than a margin, so that
 * measurement noise (timings that move by a few percent from one run to the next) never flips
 * slots or versions back and forth. The margin is relative: with margin {@code h}, a challenger
 * replaces the incumbent only when it is better by more than {@code h} of the incumbent's figure.
 * With {@code h = 0} the fresh plan always wins, as without this class. Pure.
 *
 * <p>This class holds the margin rule that every method shares. Each method applies it to its own
 * plan in its own package ({@code GroupingHysteresis}, {@code MappingHysteresis},
 * {@code VersionHysteresis}), as does {@code CoreLayout} to the layout of slots on a pool.
 */
public final class Hysteresis {

  private Hysteresis() {}

  /** Whether a challenger replaces the incumbent when lower is better (latency, cost). */
  public static boolean replacesLower(double incumbent, double challenger, double margin) {
    return challenger < incumbent * (1 - margin);
  }

  /** Whether a challenger replaces the incumbent when higher is better (throughput). */
  public static boolean replacesHigher(double incumbent, double challenger, double margin) {
    return challenger > incumbent * (1 + margin);
  }
}

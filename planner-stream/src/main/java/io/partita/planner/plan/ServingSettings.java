package io.partita.planner.plan;

import io.partita.planning.grouping.ServingRate;

/**
 * How the planner learns from what the serving slots ran ({@code planner.serving.*}; the rules are
 * {@link ServingRate}'s, the glue {@link ServedGroupings}).
 *
 * @param enabled whether serving evidence is read at all ({@code planner.serving.enabled}, default
 *     true); off, plans rest on the profiler's measurements alone, as before
 * @param fullBusyMs a window whose runs took this long on the slots' runners carries full weight
 *     ({@code planner.serving.full.busy.ms}, default 1000)
 * @param fullItems a window of this many items carries full weight ({@code planner.serving.full.items},
 *     default 300)
 */
public record ServingSettings(boolean enabled, long fullBusyMs, long fullItems) {
  public static final ServingSettings DEFAULTS = new ServingSettings(true, 1_000, 300);
  public static final ServingSettings OFF = new ServingSettings(false, 1_000, 300);

  public ServingSettings {
    if (fullBusyMs < 1) {
      throw new IllegalArgumentException("planner.serving.full.busy.ms: must be >= 1, was " + fullBusyMs);
    }
    if (fullItems < 1) {
      throw new IllegalArgumentException("planner.serving.full.items: must be >= 1, was " + fullItems);
    }
  }

  public ServingRate.Fullness fullness() {
    return new ServingRate.Fullness(fullBusyMs, fullItems);
  }
}

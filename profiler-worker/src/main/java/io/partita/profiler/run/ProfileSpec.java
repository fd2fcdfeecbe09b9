package io.partita.profiler.run;

import io.partita.profiler.env.ProviderProbe.Provider;
import java.util.List;
import java.util.Objects;

/**
 * What one profile run measures: the Kafka {@code ProfileRequest}, the command line and
 * {@code ProfilerService.profileNow} all come down to this.
 *
 * <p>Empty lists mean the defaults: every partition size and batch size the measurer picks, every
 * provider that loads. Single points are measured unless groupings are given and sizes are not;
 * then only the groupings are measured (each at every batch size and provider).
 *
 * @param requestId who asked (published with every event); never null
 * @param model the model id in the repository
 * @param version one version id, or null for every version of the model
 * @param groupings whole groupings to run at once, e.g. [[2], [1, 1]]
 * @param budgetMillis time budget per point after warm-up
 */
public record ProfileSpec(
    String requestId,
    String model,
    String version,
    List<Integer> sizes,
    List<Integer> batches,
    List<List<Integer>> groupings,
    List<Provider> providers,
    long budgetMillis) {

  public ProfileSpec {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(model, "model");
    sizes = List.copyOf(sizes);
    batches = List.copyOf(batches);
    groupings = groupings.stream().map(List::copyOf).toList();
    providers = List.copyOf(providers);
    if (budgetMillis < 1) {
      throw new IllegalArgumentException("budgetMillis must be at least 1, got " + budgetMillis);
    }
  }

  /** A model (every version when {@code version} is null) with every default. */
  public static ProfileSpec defaults(String requestId, String model, String version, long budgetMillis) {
    return new ProfileSpec(requestId, model, version, List.of(), List.of(), List.of(), List.of(), budgetMillis);
  }

  /** Whether single points (as opposed to only groupings) are measured. */
  public boolean measuresPoints() {
    return groupings.isEmpty() || !sizes.isEmpty();
  }
}

package io.partita.profiler.cli;

import io.partita.profiler.env.ProviderProbe.Provider;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The parsed and checked {@code partita profile} command line ({@link ProfileCli#options()} builds
 * it from the typed flags). Exactly one mode: measure a model (the default,
 * needs --model-repo and --model), {@code --env} (print the host environment) or {@code --baseline}
 * (run the baseline benchmark).
 */
public record ProfileOptions(
    Mode mode,
    Target target,
    Grid grid,
    Map<String, Long> dims,
    long budgetMillis,
    String hostId,
    boolean json,
    boolean spinning,
    Publish publish) {

  /**
   * The model measured ({@code --model-repo}, {@code --model}, {@code --version}; null in the
   * {@code --env} and {@code --baseline} modes, and the version when every version is measured).
   */
  public record Target(Path modelRepo, String model, String version) {}

  /**
   * The points measured ({@code --sizes}, {@code --batches}, {@code --grouping}, {@code --provider},
   * {@code --compare-grid}).
   */
  public record Grid(List<Integer> sizes, List<Integer> batches, List<Integer> grouping, List<Provider> providers,
      boolean compareGrid) {}

  /**
   * Where the results are published ({@code --broker}, null: printed only; {@code --topic-prefix};
   * {@code --no-baseline} turns the baseline of the published environment off).
   */
  public record Publish(String broker, String topicPrefix, boolean baseline) {}

  public enum Mode { MEASURE, ENV, BASELINE }

  public static final long DEFAULT_BUDGET_MS = 2000;
}

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
    Path modelRepo,
    String model,
    String version,
    List<Integer> sizes,
    List<Integer> batches,
    List<Integer> grouping,
    List<Provider> providers,
    Map<String, Long> dims,
    long budgetMillis,
    String hostId,
    boolean json,
    boolean compareGrid,
    boolean spinning,
    String broker,
    String topicPrefix,
    boolean baseline) {

  public enum Mode { MEASURE, ENV, BASELINE }

  public static final long DEFAULT_BUDGET_MS = 2000;
}

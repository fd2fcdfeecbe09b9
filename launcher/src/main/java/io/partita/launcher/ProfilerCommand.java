package io.partita.launcher;

import io.partita.common.config.Settings;
import io.partita.models.repo.ModelRepository;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.ProfilerService;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "profiler", mixinStandardHelpOptions = true,
    description = "Run this host's profiler against an existing Kafka cluster: publish the host environment and"
        + " measure what profile requests ask for.")
final class ProfilerCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(ProfilerCommand.class);

  @Mixin CommonOptions common;

  @Option(names = "--model-repo", paramLabel = "DIR", description = "The model repository requests name models of.")
  Path modelRepo;

  @Option(names = "--host-id", description = "This host's id (default: the host name).")
  String hostId;

  @Option(names = "--budget-ms", description = "Time budget per point when a request gives none (default: 2000).")
  Long budgetMs;

  @Option(names = "--no-baseline", description = "Publish the environment without running the baseline benchmark.")
  boolean noBaseline;

  @Option(names = "--profile-at-start", description = "Profile every model of --model-repo once at start, with"
      + " --profile-budget-ms per point, as partita local does, before answering profile requests.")
  boolean profileAtStart;

  @Option(names = "--profile-budget-ms", defaultValue = "100", description = "With --profile-at-start: time budget per"
      + " measured point (default: ${DEFAULT-VALUE}).")
  long profileBudgetMs;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flags = new HashMap<>();
    flags.put("model.repo", modelRepo == null ? null : modelRepo.toString());
    flags.put("host.id", hostId);
    flags.put("profiler.budget.ms", budgetMs == null ? null : budgetMs.toString());
    flags.put("profiler.baseline", noBaseline ? "off" : null);
    Settings settings = common.settings(Map.of(), flags);
    Services.logSettings("profiler", settings);
    ProfilerConfig config = ProfilerConfig.from(settings);
    Services services = new Services();
    ProfilerService profiler = services.start(new ProfilerService(config));
    if (profileAtStart) {
      profileRepository(profiler, config.modelRepository(), profileBudgetMs);
    }
    return services.awaitShutdown();
  }

  /**
   * Profiles every model of {@code repo} in the background with a short budget per point, so the
   * planner has measurements of this host to plan from; each outcome is logged. Shared by
   * {@code partita local} and {@code partita profiler --profile-at-start}.
   */
  static void profileRepository(ProfilerService profiler, Path repo, long budgetMs) {
    for (String model : ModelRepository.scan(repo).models().keySet()) {
      profiler.profileNow(model, null, budgetMs).whenComplete((outcome, failure) -> {
        if (failure != null || outcome.error() != null) {
          log.warn("Profiling {} at start failed: {}", model, failure != null ? failure.getMessage() : outcome.error());
        } else {
          log.info("Profiled {} at start: {} points over versions {} (partita.profile.timings)",
              model, outcome.points().size(), outcome.versions());
        }
      });
    }
  }
}

package io.partita.launcher;

import io.partita.common.config.Settings;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.ProfilerService;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "profiler", mixinStandardHelpOptions = true,
    description = "Run this host's profiler against an existing Kafka cluster: publish the host environment and"
        + " measure what profile requests ask for.")
final class ProfilerCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--model-repo", paramLabel = "DIR", description = "The model repository requests name models of.")
  Path modelRepo;

  @Option(names = "--host-id", description = "This host's id (default: the host name).")
  String hostId;

  @Option(names = "--budget-ms", description = "Time budget per point when a request gives none (default: 2000).")
  Long budgetMs;

  @Option(names = "--no-baseline", description = "Publish the environment without running the baseline benchmark.")
  boolean noBaseline;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flags = new HashMap<>();
    flags.put("model.repo", modelRepo == null ? null : modelRepo.toString());
    flags.put("host.id", hostId);
    flags.put("profiler.budget.ms", budgetMs == null ? null : budgetMs.toString());
    flags.put("profiler.baseline", noBaseline ? "off" : null);
    Settings settings = common.settings(Map.of(), flags);
    Services.logSettings("profiler", settings);
    Services services = new Services();
    services.start(new ProfilerService(ProfilerConfig.from(settings)));
    return services.awaitShutdown();
  }
}

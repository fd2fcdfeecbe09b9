package io.partita.launcher;

import io.partita.common.config.Settings;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "worker", mixinStandardHelpOptions = true,
    description = "Run an inference worker against an existing Kafka cluster.")
final class WorkerCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--model-repo", paramLabel = "DIR", description = "The model repository to serve.")
  Path modelRepo;

  @Option(names = "--host-id", description = "This host's id (default: the host name).")
  String hostId;

  @Option(names = "--threads", description = "ONNX Runtime threads per session; 0 = all cores.")
  Integer threads;

  @Option(names = "--cuda", description = "Use the CUDA provider when it loads (needs the -Pgpu build).")
  boolean cuda;

  @Override
  public Integer call() throws Exception {
    Map<String, String> flags = new HashMap<>();
    flags.put("model.repo", modelRepo == null ? null : modelRepo.toString());
    flags.put("host.id", hostId);
    flags.put("worker.threads", threads == null ? null : threads.toString());
    flags.put("worker.cuda", cuda ? "true" : null);
    Settings settings = common.settings(Map.of(), flags);
    Services.logSettings("worker", settings);
    Services services = new Services();
    services.start(new InferenceWorker(WorkerConfig.from(settings)));
    return services.awaitShutdown();
  }
}

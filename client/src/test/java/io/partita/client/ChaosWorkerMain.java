package io.partita.client;

import io.partita.common.config.Settings;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.util.HashMap;
import java.util.Map;

/**
 * Runs one inference worker in its own JVM until it is killed, for {@link ChaosIT}. Arguments:
 * bootstrap servers, topic prefix, model repository, then {@code key=value} settings.
 */
public final class ChaosWorkerMain {
  private ChaosWorkerMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> settings = new HashMap<>();
    settings.put("kafka.bootstrap.servers", args[0]);
    settings.put("topic.prefix", args[1]);
    settings.put("model.repo", args[2]);
    for (int i = 3; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    InferenceWorker worker = new InferenceWorker(WorkerConfig.from(Settings.of(settings)));
    Runtime.getRuntime().addShutdownHook(new Thread(worker::close, "worker-shutdown"));
    worker.start();
    System.out.println("WORKER STARTED");
    Thread.currentThread().join();
  }
}

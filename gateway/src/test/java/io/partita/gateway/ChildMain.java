package io.partita.gateway;

import io.partita.common.Service;
import io.partita.common.config.Settings;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.util.HashMap;
import java.util.Map;

/**
 * Runs one gateway or one inference worker in its own JVM until it is killed, for
 * {@link PackedJobKillIT}. Arguments: {@code gateway} or {@code worker}, then {@code key=value}
 * settings.
 */
public final class ChildMain {
  private ChildMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> settings = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    Service service = switch (args[0]) {
      case "gateway" -> new Gateway(GatewayConfig.from(Settings.of(settings)));
      case "worker" -> new InferenceWorker(WorkerConfig.from(Settings.of(settings)));
      default -> throw new IllegalArgumentException("first argument: gateway or worker, not " + args[0]);
    };
    Runtime.getRuntime().addShutdownHook(new Thread(service::close, "child-shutdown"));
    service.start();
    System.out.println(args[0].toUpperCase() + " STARTED");
    Thread.currentThread().join();
  }
}

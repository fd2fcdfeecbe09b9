package io.partita.launcher.bench;

import io.partita.common.config.Settings;
import io.partita.gateway.Gateway;
import io.partita.gateway.GatewayConfig;
import io.partita.launcher.EmbeddedKafka;
import io.partita.worker.InferenceWorker;
import io.partita.worker.WorkerConfig;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.time.Duration;

/**
 * A whole Partita pipeline for one benchmark configuration: an embedded broker on free ports, a
 * model repository holding the benchmark's models, one inference worker and one gateway, all in
 * this JVM (the same cores the engine figures used).
 */
final class PipelineEnv implements AutoCloseable {
  final EmbeddedKafka kafka;
  final InferenceWorker worker;
  final Gateway gateway;
  final String prefix;

  PipelineEnv(Path dir, List<BenchModel> models, Map<String, String> workerSettings, int threads) throws Exception {
    this(dir, repositoryOf(dir.resolve("repo"), models), workerSettings, threads);
  }

  /** A model repository holding each benchmark model as {@code <name>/1/model.onnx}. */
  static Path repositoryOf(Path repo, List<BenchModel> models) throws IOException {
    for (BenchModel m : models) {
      Path version = repo.resolve(m.name()).resolve("1");
      Files.createDirectories(version);
      Files.copy(m.file(), version.resolve("model.onnx"));
    }
    return repo;
  }

  PipelineEnv(Path dir, Path repo, Map<String, String> workerSettings, int threads) throws Exception {
    this(dir, repo, workerSettings, threads, null);
  }

  /** @param cpu told which threads each part's start created (null: nobody asks) */
  PipelineEnv(Path dir, List<BenchModel> models, Map<String, String> workerSettings, int threads, CpuSplit cpu) throws Exception {
    this(dir, repositoryOf(dir.resolve("repo"), models), workerSettings, threads, cpu);
  }

  PipelineEnv(Path dir, Path repo, Map<String, String> workerSettings, int threads, CpuSplit cpu) throws Exception {
    if (cpu != null) {
      cpu.part("other Java");
    }
    kafka = new EmbeddedKafka(freePortPair(), dir);
    kafka.start();
    if (cpu != null) {
      cpu.part("broker");
    }
    prefix = "bench";
    Map<String, String> values = new HashMap<>();
    values.put("kafka.bootstrap.servers", kafka.bootstrapServers());
    values.put("kafka.max.request.size", Integer.toString(8 << 20));
    values.put("topic.prefix", prefix);
    values.put("model.repo", repo.toString());
    values.put("http.port", "0");
    values.put("worker.threads", Integer.toString(threads));
    values.put("gateway.id", "bench");
    values.put("gateway.routing", "any"); // no planner here: requests go straight to the worker group
    values.putAll(workerSettings);
    Settings settings = Settings.of(values);
    worker = new InferenceWorker(WorkerConfig.from(settings));
    worker.start();
    if (cpu != null) {
      cpu.part("worker");
    }
    gateway = new Gateway(GatewayConfig.from(settings));
    gateway.start();
    if (cpu != null) {
      cpu.part("gateway");
    }
  }

  static int freePortPair() throws IOException {
    for (int i = 0; i < 50; i++) {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      try (ServerSocket next = new ServerSocket(port + 1)) {
        return port;
      } catch (IOException busy) {
        // the controller port is taken: try another pair
      }
    }
    throw new IOException("no two adjacent free ports for the embedded broker");
  }

  /** A Kafka-native client of this pipeline (its own reply topic). */
  io.partita.client.PartitaClient client() {
    return io.partita.client.PartitaClient.start(io.partita.client.PartitaClient.Config.of(kafka.bootstrapServers())
        .withTopicPrefix(prefix).withClientId("bench").withTimeout(Duration.ofSeconds(60)));
  }

  @Override
  public void close() {
    gateway.close();
    worker.close();
    kafka.close();
  }
}

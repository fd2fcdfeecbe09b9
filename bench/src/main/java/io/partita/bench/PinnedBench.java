package io.partita.bench;

import io.partita.avro.InferenceReply;
import io.partita.client.PartitaClient;
import io.partita.launcher.cluster.CpuLayout;
import io.partita.runtime.Pinning;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Table 1k: a compute-heavy model with the broker off the engine's core. The worker runs in its own
 * JVM pinned to the last CPU this JVM may use ({@code taskset -c}), with one ONNX Runtime thread and
 * its batching off; this JVM (the broker, the gateway and the load generator) is pinned to the others. The
 * yardstick is the engine in-process on that same one CPU, batch-1 calls from the same number of
 * client threads. Linux with {@code taskset} and at least two CPUs; otherwise the table says why it
 * is missing.
 */
final class PinnedBench {
  /** Client threads of the row, as the goal states it. */
  static final int CLIENTS = 16;
  /** Short repeats of each row; the row is the median one. */
  static final int REPEATS = 3;

  private final Path scratch;
  private final Duration warmup;
  private final Duration measured;
  private final Duration discard;

  /** @param discard load on the new worker, discarded, before the measured row */
  PinnedBench(Path scratch, Duration warmup, Duration measured, Duration discard) {
    this.discard = discard;
    this.scratch = scratch;
    this.warmup = warmup;
    this.measured = measured;
  }

  /** Why the table cannot run here, or null when it can. */
  static String unavailable() {
    if (Pinning.usableCpus().size() < 2) {
      return "needs at least two CPUs";
    }
    if (!Files.isExecutable(Path.of("/usr/bin/taskset")) && !Files.isExecutable(Path.of("/bin/taskset"))) {
      return "needs taskset (util-linux)";
    }
    return null;
  }

  /** The engine row and the pipeline row for {@code model}. */
  List<List<String>> run(BenchModel model) throws Exception {
    List<Integer> usable = Pinning.usableCpus(); // restored after: the affinity this JVM started with
    String all = CpuLayout.cpuset(usable);
    String engineCpu = Integer.toString(usable.get(usable.size() - 1));
    String restCpus = CpuLayout.cpuset(usable.subList(0, usable.size() - 1));
    long pid = ProcessHandle.current().pid();
    List<List<String>> rows = new ArrayList<>();
    List<LoadRunner.Result> engines = new ArrayList<>();
    pin(pid, engineCpu);
    try {
      for (int i = 0; i < REPEATS; i++) {
        engines.add(EngineBench.run(model, 1, CLIENTS, 1, warmup, measured));
      }
    } finally {
      pin(pid, all);
    }
    LoadRunner.Result engine = median(engines);
    rows.add(row(model, "(a) engine, in-process, 1 thread", "CPU " + engineCpu, engines, engine));
    Path dir = Files.createTempDirectory(scratch, "pinned");
    try (PipelineEnv env = PipelineEnv.withoutWorker(dir, List.of(model))) {
      pin(pid, restCpus); // the broker, the gateway and the load generator; threads made later inherit it
      try (WorkerProcess worker = WorkerProcess.start(dir, engineCpu, env);
           PartitaClient client = env.client()) {
        worker.awaitAnswer(client, model, Duration.ofSeconds(180));
        // The worker's JVM is new and compiles on the engine's CPU: load it, discarded, until the JIT settles.
        LoadRunner.run(CLIENTS, Duration.ZERO, discard, 1, i -> Bench.kafkaCall(client, model, i));
        List<LoadRunner.Result> runs = new ArrayList<>();
        for (int i = 0; i < REPEATS; i++) {
          runs.add(LoadRunner.run(CLIENTS, warmup, measured, 1, j -> Bench.kafkaCall(client, model, j)));
        }
        rows.add(row(model, "(b) Kafka, Java client -> worker (batching off, 1 thread)",
            "worker on CPU " + engineCpu + "; broker, gateway, load on CPU " + restCpus, runs, engine));
      }
    } finally {
      pin(pid, all);
    }
    return rows;
  }

  /** The repeat of median throughput (of an odd number of repeats). */
  private static LoadRunner.Result median(List<LoadRunner.Result> repeats) {
    List<LoadRunner.Result> sorted = new ArrayList<>(repeats);
    sorted.sort(Comparator.comparingDouble(LoadRunner.Result::throughput));
    return sorted.get(sorted.size() / 2);
  }

  /** A row: the median repeat's figures, the repeats' range and spread, its ratio to the engine's median. */
  private static List<String> row(BenchModel model, String path, String cpus, List<LoadRunner.Result> repeats, LoadRunner.Result engine) {
    LoadRunner.Result r = median(repeats);
    double min = repeats.stream().mapToDouble(LoadRunner.Result::throughput).min().orElse(Double.NaN);
    double max = repeats.stream().mapToDouble(LoadRunner.Result::throughput).max().orElse(Double.NaN);
    double p50 = r.latency() == null ? Double.NaN : r.latency().p50Nanos() / 1e6;
    double p99 = r.latency() == null ? Double.NaN : r.latency().p99Nanos() / 1e6;
    long errors = repeats.stream().mapToLong(LoadRunner.Result::errors).sum();
    String note = errors == 0 ? "" : errors + " errors";
    return List.of(model.name(), path, cpus, Integer.toString(CLIENTS), Report.fmt(r.throughput()), Report.fmt(min), Report.fmt(max),
        Report.fmt((max - min) / r.throughput()), Report.fmt(p50), Report.fmt(p99), Report.fmt(r.throughput() / engine.throughput()), note);
  }

  /**
   * Pins every thread of a process to {@code cpus} ({@code taskset -a -p -c}); fails when taskset does.
   * taskset lists the process's threads and then sets each, and stops at the first that ended in
   * between ("No such process"), leaving the rest as they were; a JVM under load starts and ends
   * threads all the time, so that case is tried again (it cost a whole bench run once).
   */
  static void pin(long pid, String cpus) throws IOException, InterruptedException {
    for (int attempt = 1; ; attempt++) {
      Process p = new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, Long.toString(pid)).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      boolean done = p.waitFor(30, TimeUnit.SECONDS);
      if (done && p.exitValue() == 0) {
        return;
      }
      if (!done || !out.contains("No such process") || attempt == PIN_ATTEMPTS) {
        throw new IOException("taskset -a -p -c " + cpus + " " + pid + " failed" + (attempt > 1 ? " (attempt " + attempt + ")" : "")
            + ": " + out.strip());
      }
    }
  }

  /** How many times {@link #pin} runs taskset while threads end under it. */
  private static final int PIN_ATTEMPTS = 10;

  /** {@code partita worker} in its own JVM pinned to one CPU, serving the pipeline's repository on its broker. */
  static final class WorkerProcess implements AutoCloseable {
    private final LocalProcess process;

    private WorkerProcess(LocalProcess process) {
      this.process = process;
    }

    static WorkerProcess start(Path dir, String cpu, PipelineEnv env) throws IOException {
      List<String> command = List.of("taskset", "-c", cpu, LocalProcess.java(), "-Xmx1g", "-jar", LocalProcess.launcherJar().toString(),
          "worker", "--bootstrap", env.kafka.bootstrapServers(), "--topic-prefix", env.prefix, "--model-repo", env.repo.toString(),
          "--host-id", "pinned", "--threads", "1", "--set", "worker.batch.max=1");
      return new WorkerProcess(LocalProcess.spawn(command, dir.resolve("worker.log"), -1));
    }

    /** Calls the model until one call is answered (the worker joined its group and opened its slot). */
    void awaitAnswer(PartitaClient client, BenchModel model, Duration timeout) throws Exception {
      long deadline = System.nanoTime() + timeout.toNanos();
      String last = "no answer";
      while (System.nanoTime() < deadline) {
        process.checkAlive("the pinned worker");
        try {
          InferenceReply reply = client.infer(model.name(), model.name(), List.of(model.wireInput(1, 0))).get(30, TimeUnit.SECONDS);
          if (reply.getError() == null) {
            return;
          }
          last = reply.getError().getCode() + ": " + reply.getError().getMessage();
        } catch (TimeoutException e) {
          last = "no answer within 30 s";
        }
      }
      throw new IOException("the pinned worker did not answer within " + timeout.toSeconds() + " s (" + last + "): " + process.tail());
    }

    @Override
    public void close() {
      process.close();
    }
  }
}

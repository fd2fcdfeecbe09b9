package io.partita.worker.bench;

import ai.onnx.proto.OnnxMl;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import io.partita.avro.InferenceRequest;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.onnx.OnnxGraphBuilder;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.VersionEntry;
import io.partita.runtime.Pinning;
import io.partita.runtime.SessionOpener;
import io.partita.runtime.SlotConfig;
import io.partita.worker.WorkerFixtures;
import io.partita.worker.serving.ModelSession;
import io.partita.worker.serving.WeightFileMounts;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Figures for docs/internals/worker.md: (1) one-core slots of one model version with a session each, or
 * sharing one session called from every slot's pinned thread, and one session over all cores;
 * (2) what batching buys on the demo model. Prints Markdown rows.
 *
 * <pre>
 * ./mvnw -B -q -o -pl inference-worker test-compile exec:java -Dexec.classpathScope=test \
 *   -Dexec.mainClass=io.partita.worker.bench.SlotBenchmark [-Dexec.args="SECONDS ROUNDS"]
 * ./mvnw ... -Dexec.args="memory shared|separate"     # resident memory of the sessions, one JVM each
 * </pre>
 */
public final class SlotBenchmark {
  private static final int IN = 512;
  private static final int HIDDEN = 2048;
  private static final int BATCH = 16;

  private SlotBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path root = Files.createTempDirectory("partita-bench");
    VersionEntry mlp = writeMlp(root);
    List<Integer> cpus = Pinning.usableCpus();
    if (args.length > 0 && args[0].equals("memory")) {
      memory(mlp, cpus, args[1].equals("shared"));
      return;
    }
    double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    System.out.printf("%d usable CPUs %s, %s, model %dx%dx%dx%d MLP, batch %d, %.0f s x %d rounds%n", cpus.size(), cpus,
        System.getProperty("os.arch"), IN, HIDDEN, HIDDEN, IN, BATCH, seconds, rounds);
    System.out.println();
    System.out.println("| layout | sessions | inferences/s (best of rounds) | p50 ms | p99 ms |");
    System.out.println("| --- | --- | --- | --- | --- |");
    List<Result> separate = new ArrayList<>();
    List<Result> shared = new ArrayList<>();
    List<Result> wide = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      separate.add(oneCoreSlots(mlp, cpus, false, seconds));
      shared.add(oneCoreSlots(mlp, cpus, true, seconds));
      wide.add(oneWideSlot(mlp, cpus, seconds));
    }
    print(cpus.size() + " x 1-core slots", cpus.size() + " (one each)", separate);
    print(cpus.size() + " x 1-core slots", "1 (shared)", shared);
    print("1 x " + cpus.size() + "-core slot", "1", wide);

    System.out.println();
    batching(root, cpus.get(0), seconds);
  }

  private record Result(double throughput, double p50, double p99) {}

  private static void print(String layout, String sessions, List<Result> results) {
    Result best = results.stream().max((a, b) -> Double.compare(a.throughput(), b.throughput())).orElseThrow();
    System.out.printf("| %s | %s | %.1f (%s) | %.2f | %.2f |%n", layout, sessions, best.throughput(),
        String.join(", ", results.stream().map(r -> String.format("%.1f", r.throughput())).toList()), best.p50(), best.p99());
  }

  /** A MatMul+Relu MLP big enough that compute, not call overhead, dominates. */
  private static VersionEntry writeMlp(Path root) throws Exception {
    Random random = new Random(7);
    OnnxGraphBuilder g = new OnnxGraphBuilder("bench_mlp", "partita-bench");
    g.input("x", OnnxMl.TensorProto.DataType.FLOAT, "batch", IN);
    g.initializer("w1", weights(random, IN * HIDDEN), IN, HIDDEN);
    g.initializer("w2", weights(random, HIDDEN * HIDDEN), HIDDEN, HIDDEN);
    g.initializer("w3", weights(random, HIDDEN * IN), HIDDEN, IN);
    g.matMul("x", "w1", "h1").relu("h1", "a1").matMul("a1", "w2", "h2").relu("h2", "a2").matMul("a2", "w3", "y");
    g.output("y", OnnxMl.TensorProto.DataType.FLOAT, "batch", IN);
    Path file = root.resolve("bench-mlp/1/model.onnx");
    Files.createDirectories(file.getParent());
    Files.write(file, g.toBytes());
    RepositoryIndex index = ModelRepository.scan(root);
    return index.models().get("bench-mlp").latest();
  }

  private static float[] weights(Random random, int n) {
    float[] w = new float[n];
    for (int i = 0; i < n; i++) {
      w[i] = (float) (random.nextGaussian() * 0.02);
    }
    return w;
  }

  private static OnnxTensor input(OrtEnvironment env) throws Exception {
    float[] x = new float[BATCH * IN];
    Arrays.fill(x, 0.5f);
    return OnnxTensor.createTensor(env, FloatBuffer.wrap(x), new long[] {BATCH, IN});
  }

  /** One thread per CPU, each pinned, calling a one-thread session: its own, or one shared. */
  private static Result oneCoreSlots(VersionEntry mlp, List<Integer> cpus, boolean share, double seconds) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    SessionOpener factory = new SessionOpener(env, SessionOpener.CudaFallback.TO_CPU);
    List<OrtSession> sessions = new ArrayList<>();
    try {
      for (int i = 0; i < (share ? 1 : cpus.size()); i++) {
        sessions.add(factory.open(mlp.modelFile(), SlotConfig.pinned(List.of(cpus.get(i)), true)).session());
      }
      List<OrtSession> perThread = new ArrayList<>();
      for (int i = 0; i < cpus.size(); i++) {
        perThread.add(sessions.get(share ? 0 : i));
      }
      return drive(env, perThread, cpus, seconds);
    } finally {
      for (OrtSession s : sessions) {
        s.close();
      }
    }
  }

  /** One session with one pinned intra-op thread per CPU, called from one thread (pinned to the first CPU). */
  private static Result oneWideSlot(VersionEntry mlp, List<Integer> cpus, double seconds) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    Result[] out = new Result[1];
    Exception[] error = new Exception[1];
    Thread t = new Thread(() -> {
      try {
        Pinning.pinCurrentThread(cpus);
        try (OrtSession session = new SessionOpener(env, SessionOpener.CudaFallback.TO_CPU).open(mlp.modelFile(), SlotConfig.pinned(cpus, true)).session()) {
          Pinning.pinCurrentThread(List.of(cpus.get(0)));
          out[0] = drive(env, List.of(session), List.of(), seconds);
        }
      } catch (Exception e) {
        error[0] = e;
      }
    });
    t.start();
    t.join();
    if (error[0] != null) {
      throw error[0];
    }
    return out[0];
  }

  /** Runs each session from its own thread (pinned to {@code pins[i]} when given) for {@code seconds}. */
  private static Result drive(OrtEnvironment env, List<OrtSession> sessions, List<Integer> pins, double seconds) throws Exception {
    int n = sessions.size();
    List<long[]> latencies = new ArrayList<>();
    long[] counts = new long[n];
    CountDownLatch ready = new CountDownLatch(n);
    CountDownLatch go = new CountDownLatch(1);
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long[] lat = new long[1 << 20];
      latencies.add(lat);
      int id = i;
      Thread t = new Thread(() -> {
        if (!pins.isEmpty()) {
          Pinning.pinCurrentThread(List.of(pins.get(id)));
        }
        try (OnnxTensor x = input(env)) {
          Map<String, OnnxTensor> feeds = Map.of("x", x);
          for (int w = 0; w < 5; w++) {
            sessions.get(id).run(feeds).close();
          }
          ready.countDown();
          go.await();
          int k = 0;
          while (!stop.get()) {
            long t0 = System.nanoTime();
            sessions.get(id).run(feeds).close();
            if (k < lat.length) {
              lat[k] = System.nanoTime() - t0;
            }
            k++;
          }
          counts[id] = k;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      threads.add(t);
      t.start();
    }
    ready.await();
    long start = System.nanoTime();
    go.countDown();
    Thread.sleep((long) (seconds * 1000)); // a benchmark's measuring window, not a wait for a condition
    stop.set(true);
    for (Thread t : threads) {
      t.join();
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    long total = Arrays.stream(counts).sum();
    long[] all = new long[(int) Math.min(total, Integer.MAX_VALUE)];
    int p = 0;
    for (int i = 0; i < n; i++) {
      int c = (int) Math.min(counts[i], latencies.get(i).length);
      System.arraycopy(latencies.get(i), 0, all, p, c);
      p += c;
    }
    long[] used = Arrays.copyOf(all, p);
    Arrays.sort(used);
    return new Result(total / elapsed, used[used.length / 2] / 1e6, used[(int) (used.length * 0.99)] / 1e6);
  }

  /** Requests of one row of the demo model, run through a slot's session in batches of k. */
  private static void batching(Path root, int cpu, double seconds) throws Exception {
    DemoRepository.writeTo(root);
    RepositoryIndex index = ModelRepository.scan(root);
    VersionEntry demo = index.models().get(DemoMlp.MODEL_NAME).version("1").orElseThrow();
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    System.out.println("| batch (requests of 1 row, demo-a adapter) | requests/s | ms per batch |");
    System.out.println("| --- | --- | --- |");
    Thread t = new Thread(() -> {
      Pinning.pinCurrentThread(List.of(cpu));
      SlotConfig spec = SlotConfig.pinned(List.of(cpu), true);
      try (ModelSession session = new ModelSession("bench", demo, env, new SessionOpener(env, SessionOpener.CudaFallback.TO_CPU).open(demo.modelFile(), spec),
          new WeightFileMounts(root, demo.signature(), 0, System::currentTimeMillis, () -> { }))) {
        String a = DemoRepository.adapterPath("a");
        session.mounts().mount("demo-a", "bench", new io.partita.worker.serving.WeightFileRef(a, io.partita.models.repo.Sha256.of(root.resolve(a))));
        for (int k : new int[] {1, 4, 16, 64}) {
          List<InferenceRequest> requests = new ArrayList<>();
          for (int i = 0; i < k; i++) {
            requests.add(WorkerFixtures.request("r" + i, "demo-a", DemoMlp.sampleInput(1, i)));
          }
          int[] rows = new int[k];
          Arrays.fill(rows, 1);
          try (WeightFileMounts.Lease lease = session.mounts().acquire("demo-a")) {
            for (int w = 0; w < 200; w++) {
              session.run(requests, rows, lease.adapter());
            }
            long end = System.nanoTime() + (long) (seconds * 1e9);
            long start = System.nanoTime();
            long batches = 0;
            while (System.nanoTime() < end) {
              session.run(requests, rows, lease.adapter());
              batches++;
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            System.out.printf("| %d | %.0f | %.3f |%n", k, batches * k / elapsed, elapsed * 1000 / batches);
          }
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    t.start();
    t.join();
  }

  /** Resident memory taken by opening one-thread sessions for every CPU: one each, or one shared. */
  private static void memory(VersionEntry mlp, List<Integer> cpus, boolean shared) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    Path tiny = Files.createTempDirectory("partita-bench-tiny");
    DemoRepository.writeTo(tiny);
    Path demo = tiny.resolve(DemoMlp.MODEL_NAME + "/1/model.onnx");
    try (OrtSession warm = new SessionOpener(env, SessionOpener.CudaFallback.TO_CPU).open(demo, SlotConfig.unpinned(1)).session()) {
      // the native library's one-time allocations happen before the baseline, on a model too small to leave room for the big one
    }
    long before = rss();
    List<OrtSession> sessions = new ArrayList<>();
    for (int i = 0; i < (shared ? 1 : cpus.size()); i++) {
      sessions.add(new SessionOpener(env, SessionOpener.CudaFallback.TO_CPU).open(mlp.modelFile(), SlotConfig.pinned(List.of(cpus.get(i)), true)).session());
    }
    try (OnnxTensor x = input(env)) {
      for (OrtSession s : sessions) {
        s.run(Map.of("x", x)).close();
      }
    }
    long after = rss();
    System.out.printf("| %d x 1-core slots | %s | %.1f MiB |%n", cpus.size(), shared ? "1 (shared)" : cpus.size() + " (one each)",
        (after - before) / 1048576.0);
    for (OrtSession s : sessions) {
      s.close();
    }
  }

  private static long rss() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    return -1;
  }
}

package io.partita.bench;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Weight files on one base session: resident memory as adapters are mounted, against the bytes
 * of the base model and the adapters themselves; and throughput when consecutive runs activate
 * different adapters against all runs activating one.
 */
final class AdapterBench {
  private AdapterBench() {}

  record Memory(int adapters, long baseFileBytes, long adapterBytes, long rssBaseDelta, long rssAdaptersDelta) {}

  static long rss() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IOException("no VmRSS in /proc/self/status");
  }

  /**
   * Mounts {@code count} adapters (width x rank each side) on one base session in a child JVM with
   * a fixed, pre-touched heap (so the Java heap neither grows nor shrinks under the measurement)
   * and reports its resident memory before and after. The adapters are read from files, as the
   * worker mounts them.
   */
  static Memory memory(Path workDir, int width, int rank, int count) throws Exception {
    Path dir = Files.createTempDirectory(workDir, "adapters");
    Path base = dir.resolve("base.onnx");
    Files.write(base, LoraModels.base(width));
    long adapterBytes = 0;
    for (int i = 0; i < count; i++) {
      byte[] a = LoraModels.adapter(width, rank, i);
      Files.write(dir.resolve(i + ".onnx_adapter"), a);
      adapterBytes += a.length;
    }
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xms64m", "-Xmx64m", "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC",
        AdapterBench.class.getName(), dir.toString(), Integer.toString(count));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    // The class path goes through the environment: ONNX Runtime 1.29's native library crashes the
    // process when the command line is about 4 KiB long, and a test class path easily is.
    builder.environment().put("CLASSPATH", System.getProperty("java.class.path"));
    Process child = builder.start();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!child.waitFor(5, TimeUnit.MINUTES) || child.exitValue() != 0) {
      child.destroyForcibly();
      throw new IllegalStateException("adapter memory child failed: " + out.strip());
    }
    long withBase = -1;
    long withAdapters = -1;
    long before = -1;
    for (String line : out.split("\n")) {
      if (line.startsWith("rss-before=")) before = Long.parseLong(line.substring(11).strip());
      if (line.startsWith("rss-base=")) withBase = Long.parseLong(line.substring(9).strip());
      if (line.startsWith("rss-adapters=")) withAdapters = Long.parseLong(line.substring(13).strip());
    }
    if (before < 0 || withBase < 0 || withAdapters < 0) {
      throw new IllegalStateException("adapter memory child printed no figures: " + out.strip());
    }
    return new Memory(count, Files.size(base), adapterBytes, withBase - before, withAdapters - withBase);
  }

  /** The child of {@link #memory}: {@code <dir> <count>}; prints resident memory at each step. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int count = Integer.parseInt(args[1]);
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    System.out.println("rss-before=" + rss());
    try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
      try (OrtSession session = env.createSession(dir.resolve("base.onnx").toString(), options)) {
        System.out.println("rss-base=" + rss());
        List<OrtLoraAdapter> mounted = new ArrayList<>();
        try {
          for (int i = 0; i < count; i++) {
            mounted.add(OrtLoraAdapter.create(dir.resolve(i + ".onnx_adapter").toString()));
          }
          System.out.println("rss-adapters=" + rss());
        } finally {
          mounted.forEach(OrtLoraAdapter::close);
        }
      }
    }
  }

  /** Throughput of batch-1 runs at the given concurrency, each run activating adapter (i % spread). */
  static LoadRunner.Result spread(int width, int rank, int spread, int threads, int concurrency, Duration warmup, Duration measured)
      throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      options.setIntraOpNumThreads(threads);
      options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
      try (OrtSession session = env.createSession(LoraModels.base(width), options)) {
        List<OrtLoraAdapter> adapters = new ArrayList<>();
        List<OnnxTensor> inputs = new ArrayList<>();
        try {
          for (int i = 0; i < spread; i++) {
            adapters.add(OrtLoraAdapter.create(LoraModels.adapter(width, rank, i)));
          }
          for (int i = 0; i < concurrency; i++) {
            float[] x = new float[width];
            Arrays.fill(x, 0.01f * (i + 1));
            inputs.add(OnnxTensor.createTensor(env, FloatBuffer.wrap(x), new long[] {1, width}));
          }
          int[] next = new int[concurrency];
          return LoadRunner.run(concurrency, warmup, measured, 1, i -> () -> {
            OrtLoraAdapter adapter = adapters.get((next[i]++ * concurrency + i) % spread);
            try (OrtSession.RunOptions run = new OrtSession.RunOptions()) {
              run.addActiveLoraAdapter(adapter);
              try (OrtSession.Result r = session.run(Map.of(LoraModels.INPUT, inputs.get(i)), run)) {
                r.get(0);
              }
            }
          });
        } finally {
          inputs.forEach(OnnxTensor::close);
          adapters.forEach(OrtLoraAdapter::close);
        }
      }
    }
  }
}

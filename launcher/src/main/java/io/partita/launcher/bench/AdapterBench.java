package io.partita.launcher.bench;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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

  /** Mounts {@code count} adapters (width x rank each side) on one base session; RSS before and after. */
  static Memory memory(int width, int rank, int count) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    byte[] base = LoraModels.base(width);
    List<byte[]> files = new ArrayList<>();
    long adapterBytes = 0;
    for (int i = 0; i < count; i++) {
      byte[] a = LoraModels.adapter(width, rank, i);
      files.add(a);
      adapterBytes += a.length;
    }
    System.gc();
    long before = rss();
    try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
      try (OrtSession session = env.createSession(base, options)) {
        long withBase = rss();
        List<OrtLoraAdapter> mounted = new ArrayList<>();
        try {
          for (byte[] f : files) {
            mounted.add(OrtLoraAdapter.create(f));
          }
          System.gc();
          long withAdapters = rss();
          return new Memory(count, base.length, adapterBytes, withBase - before, withAdapters - withBase);
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
            java.util.Arrays.fill(x, 0.01f * (i + 1));
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

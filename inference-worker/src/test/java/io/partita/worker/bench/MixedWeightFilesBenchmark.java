package io.partita.worker.bench;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import io.partita.avro.InferenceRequest;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterWriter;
import io.partita.models.lora.LoraTensor;
import io.partita.models.lora.PerRowLora;
import io.partita.models.lora.PerRowLoraFeeds;
import io.partita.models.onnx.OnnxGraphBuilder;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.Precision;
import io.partita.models.repo.VersionEntry;
import io.partita.runtime.LoraAdapters;
import io.partita.runtime.SessionOpener;
import io.partita.runtime.SlotConfig;
import io.partita.worker.WorkerFixtures;
import io.partita.worker.serving.ModelSession;
import io.partita.worker.serving.WeightFileMounts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.SplittableRandom;

/**
 * Figures for docs/internals/worker.md: requests spread over many weight files of one base model, run as one
 * batch per weight file (one adapter per ONNX Runtime call) or as one per-row batch, against all
 * requests on one weight file. In process, one thread, through {@link ModelSession} (the slot's own
 * run path, feeds built per batch included). Prints Markdown rows.
 *
 * <pre>
 * ./mvnw -B -q -o -pl inference-worker -am test-compile dependency:build-classpath \
 *   -Dmdep.outputFile=/tmp/cp.txt -Dmdep.includeScope=test
 * CLASSPATH=inference-worker/target/test-classes:inference-worker/target/classes:$(cat /tmp/cp.txt) \
 *   java io.partita.worker.bench.MixedWeightFilesBenchmark [WIDTH RANK ADAPTERS BATCH SECONDS ROUNDS]
 * </pre>
 */
public final class MixedWeightFilesBenchmark {
  private MixedWeightFilesBenchmark() {}

  public static void main(String[] args) throws Exception {
    int width = arg(args, 0, 512);
    int rank = arg(args, 1, 8);
    int adapters = arg(args, 2, 100);
    int batch = arg(args, 3, 32);
    double seconds = args.length > 4 ? Double.parseDouble(args[4]) : 3;
    Path dir = Files.createTempDirectory("partita-mixed");
    Path file = dir.resolve("model.onnx");
    Files.write(file, model(width));
    ModelSignature signature = ModelSignature.read(file);
    VersionEntry version = new VersionEntry("lora-bench", "1", file, "lora-bench/1/model.onnx", "-", Precision.FP32, List.of(),
        OptionalDouble.empty(), OptionalLong.empty(), signature);
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    SessionOpener opener = new SessionOpener(env, SessionOpener.CudaFallback.TO_CPU);
    SlotConfig slot = SlotConfig.unpinned(1);
    PerRowLora.Rewritten perRow = PerRowLora.rewrite(Files.readAllBytes(file)).rewritten().orElseThrow();

    List<LoraAdapter> params = new ArrayList<>();
    List<OrtLoraAdapter> ort = new ArrayList<>();
    for (int i = 0; i < adapters; i++) {
      LoraAdapter a = adapter(width, rank, 1000 + i);
      params.add(a);
      ort.add(LoraAdapters.load(LoraAdapterWriter.toBytes(a)));
    }
    SplittableRandom r = new SplittableRandom(3);
    List<InferenceRequest> requests = new ArrayList<>();
    for (int i = 0; i < batch; i++) {
      float[][] x = new float[1][width];
      for (int j = 0; j < width; j++) {
        x[0][j] = (float) r.nextDouble(-1, 1);
      }
      requests.add(InferenceRequest.newBuilder().setId("r" + i).setServiceModel("m")
          .setInputs(List.of(WorkerFixtures.floats("input", x))).build());
    }
    int[] rows = new int[batch];
    java.util.Arrays.fill(rows, 1);

    int rounds = args.length > 5 ? Integer.parseInt(args[5]) : 3;
    System.out.printf("model relu(x·W + (x·A)·B), width %d, adapters of rank %d, %d adapters, batches of %d one-row requests,"
        + " 1 thread, %.0f s per figure, median of %d rounds%n", width, rank, adapters, batch, seconds, rounds);
    try (ModelSession plain = new ModelSession("plain", version, env, opener.open(file, slot),
             new WeightFileMounts(dir, signature, 0, System::currentTimeMillis, () -> { }));
         ModelSession rows1 = new ModelSession("per-row", version, env, opener.open(perRow.toBytes(), slot),
             new WeightFileMounts(dir, signature, 0, true, System::currentTimeMillis, () -> { }), perRow)) {
      int[] next = {0};
      List<LoraAdapter> sameAdapter = new ArrayList<>();
      for (int i = 0; i < batch; i++) {
        sameAdapter.add(params.get(0));
      }
      PerRowLoraFeeds.Buffers buffers = PerRowLoraFeeds.Buffers.reused();
      Batch[] cases = {
          () -> plain.run(requests, rows, ort.get(0)),
          () -> {
            for (int i = 0; i < batch; i++) {
              plain.run(List.of(requests.get(i)), new int[] {1}, ort.get(next[0]++ % adapters));
            }
          },
          () -> rows1.runPerRow(requests, rows, sameAdapter),
          () -> rows1.runPerRow(requests, rows, spread(params, batch, next)),
          () -> PerRowLoraFeeds.stacks(perRow, spread(params, batch, next), buffers)};
      double[][] figures = new double[cases.length][rounds];
      for (int round = 0; round < rounds; round++) {
        for (int c = 0; c < cases.length; c++) {
          figures[c][round] = measure(seconds, batch, cases[c]);
        }
      }
      double one = median(figures[0]);
      System.out.println("| requests | run as | requests/s | vs all on one weight file |");
      System.out.println("| --- | --- | ---: | ---: |");
      row("all on one weight file", "one batch, adapter API", median(figures[0]), one);
      row("spread over " + adapters + " weight files", "one batch per weight file", median(figures[1]), one);
      row("all on one weight file", "one per-row batch", median(figures[2]), one);
      row("spread over " + adapters + " weight files", "one per-row batch", median(figures[3]), one);
      System.out.printf("building the stacked adapter inputs alone for a spread batch: %.0f us per batch%n",
          1e6 * batch / median(figures[4]));
    } finally {
      ort.forEach(OrtLoraAdapter::close);
    }
  }

  private static List<LoraAdapter> spread(List<LoraAdapter> params, int batch, int[] next) {
    List<LoraAdapter> each = new ArrayList<>(batch);
    for (int i = 0; i < batch; i++) {
      each.add(params.get(next[0]++ % params.size()));
    }
    return each;
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    java.util.Arrays.sort(s);
    return s[s.length / 2];
  }

  @FunctionalInterface
  private interface Batch {
    void run() throws OrtException;
  }

  /** Requests per second over {@code seconds}, after a warm-up. */
  private static double measure(double seconds, int batch, Batch body) throws OrtException {
    long warmEnd = System.nanoTime() + 300_000_000L;
    while (System.nanoTime() < warmEnd) {
      body.run();
    }
    long start = System.nanoTime();
    long end = start + (long) (seconds * 1e9);
    long batches = 0;
    while (System.nanoTime() < end) {
      body.run();
      batches++;
    }
    return batches * batch / ((System.nanoTime() - start) / 1e9);
  }

  private static void row(String requests, String how, double perSecond, double baseline) {
    System.out.printf("| %s | %s | %.0f | %.2fx |%n", requests, how, perSecond, perSecond / baseline);
  }

  private static int arg(String[] args, int i, int fallback) {
    return args.length > i ? Integer.parseInt(args[i]) : fallback;
  }

  private static byte[] model(int width) {
    SplittableRandom r = new SplittableRandom(7);
    float[] w = new float[width * width];
    for (int i = 0; i < w.length; i++) {
      w[i] = (float) r.nextDouble(-0.05, 0.05);
    }
    OnnxGraphBuilder g = new OnnxGraphBuilder("mixed_bench", "partita-bench");
    g.input("input", DataType.FLOAT, "batch", width);
    g.inputWithDefault("lora_A", new float[0], new long[] {width, 0}, width, "rank");
    g.inputWithDefault("lora_B", new float[0], new long[] {0, width}, "rank", width);
    g.initializer("w", w, width, width);
    g.matMul("input", "w", "base");
    g.matMul("input", "lora_A", "down");
    g.matMul("down", "lora_B", "delta");
    g.add("base", "delta", "sum");
    g.relu("sum", "output");
    g.output("output", DataType.FLOAT, "batch", width);
    return g.toBytes();
  }

  private static LoraAdapter adapter(int width, int rank, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    float[] a = new float[width * rank];
    float[] b = new float[rank * width];
    for (int i = 0; i < a.length; i++) {
      a[i] = (float) r.nextDouble(-0.1, 0.1);
      b[i] = (float) r.nextDouble(-0.1, 0.1);
    }
    return LoraAdapter.of(Map.of("lora_A", new LoraTensor(a, width, rank), "lora_B", new LoraTensor(b, rank, width)));
  }
}

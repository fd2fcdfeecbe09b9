package io.partita.models.demo;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The demo model {@code demo-heavy}: a model of a few milliseconds per inference on one core, in
 * two versions of different cost and declared accuracy, built in Java from a fixed seed (nothing is
 * downloaded). It exists so that hosts of different speeds have a reason to run different versions
 * (planning method 4 with the accuracy objective); {@link DemoMlp} is too small for its versions to
 * differ in cost.
 *
 * <pre>
 *   input  "tokens" FLOAT [N, 64, 128]            64 tokens of 128 features
 *   h1     = relu(tokens · W1 + b1)                [N, 64, H]   per token
 *   h2     = relu(h1 · W2 + b2)                    [N, 64, H]
 *   output "scores" FLOAT [N, 16] = mean_tokens(h2) · W3 + b3
 * </pre>
 *
 * Version {@code 1} has {@code H = 1024} (about 75 million multiply-adds per item); version {@code 2}
 * is version 1 pruned to its first {@code 256} hidden units (the same W1, W2, W3 rows and columns,
 * about 6.3 million): the same inputs and outputs, about a twelfth of the work, outputs that follow
 * version 1's only roughly. The accuracies in the manifest ({@link #ACCURACY_WIDE},
 * {@link #ACCURACY_PRUNED}) are declared, as a model's publisher would, not measured on a data set.
 */
public final class DemoHeavy {

  public static final String MODEL_NAME = "demo-heavy";
  public static final String INPUT = "tokens";
  public static final String OUTPUT = "scores";
  public static final int TOKENS = 64;
  public static final int FEATURES = 128;
  public static final int OUTPUT_SIZE = 16;

  /** Version 1: the full model, hidden width {@value #HIDDEN_WIDE}. */
  public static final String VERSION_WIDE = "1";
  /** Version 2: version 1 pruned to hidden width {@value #HIDDEN_PRUNED}. */
  public static final String VERSION_PRUNED = "2";
  public static final List<String> VERSIONS = List.of(VERSION_WIDE, VERSION_PRUNED);
  public static final int HIDDEN_WIDE = 1024;
  public static final int HIDDEN_PRUNED = 256;
  public static final double ACCURACY_WIDE = 0.95;
  public static final double ACCURACY_PRUNED = 0.90;

  private static final long WEIGHT_SEED = 20_261_204L;

  private DemoHeavy() {}

  /** The hidden width of a version. */
  public static int hidden(String version) {
    if (VERSION_WIDE.equals(version)) {
      return HIDDEN_WIDE;
    }
    if (VERSION_PRUNED.equals(version)) {
      return HIDDEN_PRUNED;
    }
    throw new IllegalArgumentException("no " + MODEL_NAME + " version '" + version + "'; there are " + VERSIONS);
  }

  /** The serialized ONNX model of a version. */
  public static byte[] modelBytes(String version) {
    Weights w = Weights.of(hidden(version));
    int h = w.hidden();
    OnnxGraphBuilder g = new OnnxGraphBuilder("demo_heavy_v" + version, "partita-models");
    g.input(INPUT, DataType.FLOAT, "batch", TOKENS, FEATURES);
    g.initializer("fc1.weight", w.w1(), FEATURES, h);
    g.initializer("fc1.bias", w.b1(), h);
    g.initializer("fc2.weight", w.w2(), h, h);
    g.initializer("fc2.bias", w.b2(), h);
    g.initializer("head.weight", w.w3(), h, OUTPUT_SIZE);
    g.initializer("head.bias", w.b3(), OUTPUT_SIZE);
    g.matMul(INPUT, "fc1.weight", "fc1.mm");
    g.add("fc1.mm", "fc1.bias", "fc1.pre");
    g.relu("fc1.pre", "fc1.out");
    g.matMul("fc1.out", "fc2.weight", "fc2.mm");
    g.add("fc2.mm", "fc2.bias", "fc2.pre");
    g.relu("fc2.pre", "fc2.out");
    g.reduceMean("fc2.out", new long[] {1}, "pooled");
    g.gemm("pooled", "head.weight", "head.bias", OUTPUT);
    g.output(OUTPUT, DataType.FLOAT, "batch", OUTPUT_SIZE);
    return g.toBytes();
  }

  /**
   * What a version computes, in plain Java (double accumulation), for one item {@code x}
   * ([64][128]).
   *
   * @return [16]
   */
  public static float[] reference(float[][] x, String version) {
    Weights w = Weights.of(hidden(version));
    int h = w.hidden();
    if (x.length != TOKENS) {
      throw new IllegalArgumentException("expected " + TOKENS + " tokens, got " + x.length);
    }
    double[] pooled = new double[h];
    double[] h1 = new double[h];
    for (float[] token : x) {
      if (token.length != FEATURES) {
        throw new IllegalArgumentException("a token has " + token.length + " features, expected " + FEATURES);
      }
      for (int j = 0; j < h; j++) {
        double s = w.b1()[j];
        for (int i = 0; i < FEATURES; i++) {
          s += (double) token[i] * w.w1()[i * h + j];
        }
        h1[j] = Math.max(0, s);
      }
      for (int j = 0; j < h; j++) {
        double s = w.b2()[j];
        for (int i = 0; i < h; i++) {
          s += h1[i] * w.w2()[i * h + j];
        }
        pooled[j] += Math.max(0, s) / TOKENS;
      }
    }
    float[] y = new float[OUTPUT_SIZE];
    for (int o = 0; o < OUTPUT_SIZE; o++) {
      double s = w.b3()[o];
      for (int j = 0; j < h; j++) {
        s += pooled[j] * w.w3()[j * OUTPUT_SIZE + o];
      }
      y[o] = (float) s;
    }
    return y;
  }

  /** A deterministic item ([64][128], values in [-1, 1)). */
  public static float[][] sampleInput(long seed) {
    Random r = new Random(seed);
    float[][] x = new float[TOKENS][FEATURES];
    for (float[] token : x) {
      for (int i = 0; i < FEATURES; i++) {
        token[i] = r.nextFloat() * 2f - 1f;
      }
    }
    return x;
  }

  /** Row-major weights of one hidden width: w1 [128,h], b1 [h], w2 [h,h], b2 [h], w3 [h,16], b3 [16]. */
  private record Weights(int hidden, float[] w1, float[] b1, float[] w2, float[] b2, float[] w3, float[] b3) {

    /** The wide model's weights cut to their first {@code h} hidden units (h = 1024: all of them). */
    static Weights of(int h) {
      Random r = new Random(WEIGHT_SEED);
      int wide = HIDDEN_WIDE;
      // Scaled so that activations stay of order one through both layers (uniform, variance 2 / fan-in).
      float[] w1 = uniform(r, FEATURES * wide, (float) Math.sqrt(6.0 / FEATURES));
      float[] b1 = uniform(r, wide, 0.1f);
      float[] w2 = uniform(r, wide * wide, (float) Math.sqrt(6.0 / wide));
      float[] b2 = uniform(r, wide, 0.1f);
      float[] w3 = uniform(r, wide * OUTPUT_SIZE, (float) Math.sqrt(3.0 / wide));
      float[] b3 = uniform(r, OUTPUT_SIZE, 0.1f);
      if (h == wide) {
        return new Weights(h, w1, b1, w2, b2, w3, b3);
      }
      return new Weights(h, columns(w1, FEATURES, wide, h), prefix(b1, h), block(w2, wide, h), prefix(b2, h),
          prefix(w3, h * OUTPUT_SIZE), b3);
    }

    /** The first {@code h} columns of a [rows, wide] matrix. */
    private static float[] columns(float[] m, int rows, int wide, int h) {
      float[] out = new float[rows * h];
      for (int i = 0; i < rows; i++) {
        System.arraycopy(m, i * wide, out, i * h, h);
      }
      return out;
    }

    /** The top-left [h, h] block of a [wide, wide] matrix. */
    private static float[] block(float[] m, int wide, int h) {
      float[] out = new float[h * h];
      for (int i = 0; i < h; i++) {
        System.arraycopy(m, i * wide, out, i * h, h);
      }
      return out;
    }

    private static float[] prefix(float[] v, int n) {
      return Arrays.copyOf(v, n);
    }

    private static float[] uniform(Random r, int n, float scale) {
      float[] v = new float[n];
      for (int i = 0; i < n; i++) {
        v[i] = (r.nextFloat() * 2f - 1f) * scale;
      }
      return v;
    }
  }
}

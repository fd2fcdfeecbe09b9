package io.partita.models.demo;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraTensor;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * The demo model {@code demo-mlp}: a two-layer perceptron with LoRA on its first layer, built in
 * Java from fixed seeds (nothing is downloaded), plus a plain-Java reference of the same
 * computation.
 *
 * <pre>
 *   input  "input"  FLOAT [N, 8]
 *   h      = relu(input · W1 + (input · A) · B + b1)      hidden 16
 *   output "output" FLOAT [N, 4] = h · W2 + b2             (Gemm)
 * </pre>
 *
 * {@code A} ({@value #LORA_A}, [8, r]) and {@code B} ({@value #LORA_B}, [r, 16]) are graph inputs
 * with default initializers of rank 0 ([8, 0] and [0, 16]), so with no adapter active
 * {@code (input · A) · B} is an [N, 16] block of zeros and the model is the plain MLP. ONNX Runtime
 * 1.29 accepts the zero-size dimensions (MatMul with an empty inner dimension gives zeros); the
 * module tests check it. An adapter supplies rank-2 A and B under the same names.
 *
 * <p>Version {@code 1} stores W1, b1, W2, b2 as FLOAT. Version {@code 2} stores the same values
 * rounded to FLOAT16 and casts them to FLOAT inside the graph: half the weight bytes, same inputs
 * and outputs, results within about 1e-2 of version 1. The LoRA inputs stay FLOAT in both, so one
 * adapter file serves both versions. {@link #reference} uses the FLOAT16-rounded weights for
 * version 2, so ONNX Runtime matches it to 1e-4 for both versions.
 */
public final class DemoMlp {

  public static final String MODEL_NAME = "demo-mlp";
  public static final String INPUT = "input";
  public static final String OUTPUT = "output";
  public static final int INPUT_SIZE = 8;
  public static final int HIDDEN_SIZE = 16;
  public static final int OUTPUT_SIZE = 4;
  public static final String LORA_A = "fc1.lora_A";
  public static final String LORA_B = "fc1.lora_B";
  public static final int ADAPTER_RANK = 2;

  /** Version 1: FLOAT weights. */
  public static final String VERSION_FP32 = "1";
  /** Version 2: FLOAT16-stored weights cast to FLOAT in the graph. */
  public static final String VERSION_FP16 = "2";
  public static final List<String> VERSIONS = List.of(VERSION_FP32, VERSION_FP16);

  /** Adapter ids; adapter {@code x} backs service model {@code demo-x}. */
  public static final List<String> ADAPTERS = List.of("a", "b", "c");

  /** The service model with no adapter. */
  public static final String BASE_SERVICE_MODEL = "demo";

  /** All service models, base first: demo, demo-a, demo-b, demo-c. */
  public static final List<String> SERVICE_MODELS =
      List.of(BASE_SERVICE_MODEL, "demo-a", "demo-b", "demo-c");

  private static final long WEIGHT_SEED = 20_261_129L;

  private static final Weights FP32 = Weights.generate();
  private static final Weights FP16 = FP32.roundedToFp16();

  private DemoMlp() {}

  /** The service model name for an adapter id ({@code a} -> {@code demo-a}). */
  public static String serviceModelFor(String adapterId) {
    return BASE_SERVICE_MODEL + "-" + adapterId;
  }

  /** The serialized ONNX model of a version. */
  public static byte[] modelBytes(String version) {
    boolean fp16 = isFp16(version);
    Weights w = FP32;
    OnnxGraphBuilder g = new OnnxGraphBuilder("demo_mlp_v" + version, "partita-models");
    g.input(INPUT, DataType.FLOAT, "batch", INPUT_SIZE);
    g.inputWithDefault(LORA_A, new float[0], new long[] {INPUT_SIZE, 0}, INPUT_SIZE, "lora_rank");
    g.inputWithDefault(LORA_B, new float[0], new long[] {0, HIDDEN_SIZE}, "lora_rank", HIDDEN_SIZE);
    if (fp16) {
      g.initializerFp16("fc1.weight_fp16", w.w1, INPUT_SIZE, HIDDEN_SIZE);
      g.initializerFp16("fc1.bias_fp16", w.b1, HIDDEN_SIZE);
      g.initializerFp16("fc2.weight_fp16", w.w2, HIDDEN_SIZE, OUTPUT_SIZE);
      g.initializerFp16("fc2.bias_fp16", w.b2, OUTPUT_SIZE);
      g.cast("fc1.weight_fp16", DataType.FLOAT, "fc1.weight");
      g.cast("fc1.bias_fp16", DataType.FLOAT, "fc1.bias");
      g.cast("fc2.weight_fp16", DataType.FLOAT, "fc2.weight");
      g.cast("fc2.bias_fp16", DataType.FLOAT, "fc2.bias");
    } else {
      g.initializer("fc1.weight", w.w1, INPUT_SIZE, HIDDEN_SIZE);
      g.initializer("fc1.bias", w.b1, HIDDEN_SIZE);
      g.initializer("fc2.weight", w.w2, HIDDEN_SIZE, OUTPUT_SIZE);
      g.initializer("fc2.bias", w.b2, OUTPUT_SIZE);
    }
    g.matMul(INPUT, "fc1.weight", "fc1.base");
    g.matMul(INPUT, LORA_A, "fc1.lora_down");
    g.matMul("fc1.lora_down", LORA_B, "fc1.lora_delta");
    g.add("fc1.base", "fc1.lora_delta", "fc1.sum");
    g.add("fc1.sum", "fc1.bias", "fc1.pre");
    g.relu("fc1.pre", "fc1.out");
    g.gemm("fc1.out", "fc2.weight", "fc2.bias", OUTPUT);
    g.output(OUTPUT, DataType.FLOAT, "batch", OUTPUT_SIZE);
    return g.toBytes();
  }

  /** The rank-2 adapter with id {@code a}, {@code b} or {@code c}. */
  public static LoraAdapter adapter(String adapterId) {
    int index = ADAPTERS.indexOf(adapterId);
    if (index < 0) {
      throw new IllegalArgumentException(
          "no demo adapter '" + adapterId + "'; there are " + ADAPTERS);
    }
    Random r = new Random(WEIGHT_SEED + 1000L * (index + 1));
    float[] a = uniform(r, INPUT_SIZE * ADAPTER_RANK, 0.6f);
    float[] b = uniform(r, ADAPTER_RANK * HIDDEN_SIZE, 0.6f);
    return new LoraAdapter(
        Map.of(
            LORA_A, new LoraTensor(a, INPUT_SIZE, ADAPTER_RANK),
            LORA_B, new LoraTensor(b, ADAPTER_RANK, HIDDEN_SIZE)),
        index + 1,
        Integer.parseInt(VERSION_FP32));
  }

  /**
   * The adapter behind a demo service model: empty for {@code demo}, adapter {@code x} for {@code
   * demo-x}.
   */
  public static Optional<LoraAdapter> adapterForServiceModel(String serviceModel) {
    if (BASE_SERVICE_MODEL.equals(serviceModel)) {
      return Optional.empty();
    }
    if (!SERVICE_MODELS.contains(serviceModel)) {
      throw new IllegalArgumentException(
          "no demo service model '" + serviceModel + "'; there are " + SERVICE_MODELS);
    }
    return Optional.of(adapter(serviceModel.substring(BASE_SERVICE_MODEL.length() + 1)));
  }

  /**
   * What the demo model computes, in plain Java (double accumulation), for a batch {@code x}
   * ([N][8]) with an optional adapter's LoRA delta on the first layer. Version 2 uses the
   * FLOAT16-rounded weights it stores.
   *
   * @return [N][4]
   */
  public static float[][] reference(float[][] x, LoraAdapter adapterOrNull, String version) {
    Weights w = isFp16(version) ? FP16 : FP32;
    float[] a = null;
    float[] b = null;
    int rank = 0;
    if (adapterOrNull != null) {
      LoraTensor ta = adapterOrNull.parameter(LORA_A);
      LoraTensor tb = adapterOrNull.parameter(LORA_B);
      long[] sa = ta.shape();
      long[] sb = tb.shape();
      if (sa.length != 2 || sb.length != 2 || sa[0] != INPUT_SIZE || sb[1] != HIDDEN_SIZE
          || sa[1] != sb[0]) {
        throw new IllegalArgumentException(
            "adapter shapes " + ta + " / " + tb + " do not fit [8, r] / [r, 16]");
      }
      rank = (int) sa[1];
      a = ta.data();
      b = tb.data();
    }
    float[][] y = new float[x.length][OUTPUT_SIZE];
    for (int n = 0; n < x.length; n++) {
      float[] row = x[n];
      if (row.length != INPUT_SIZE) {
        throw new IllegalArgumentException(
            "row " + n + " has " + row.length + " values, expected " + INPUT_SIZE);
      }
      double[] down = new double[rank];
      for (int k = 0; k < rank; k++) {
        for (int i = 0; i < INPUT_SIZE; i++) {
          down[k] += (double) row[i] * a[i * rank + k];
        }
      }
      double[] h = new double[HIDDEN_SIZE];
      for (int j = 0; j < HIDDEN_SIZE; j++) {
        double s = w.b1[j];
        for (int i = 0; i < INPUT_SIZE; i++) {
          s += (double) row[i] * w.w1[i * HIDDEN_SIZE + j];
        }
        for (int k = 0; k < rank; k++) {
          s += down[k] * b[k * HIDDEN_SIZE + j];
        }
        h[j] = Math.max(0.0, s);
      }
      for (int o = 0; o < OUTPUT_SIZE; o++) {
        double s = w.b2[o];
        for (int j = 0; j < HIDDEN_SIZE; j++) {
          s += h[j] * w.w2[j * OUTPUT_SIZE + o];
        }
        y[n][o] = (float) s;
      }
    }
    return y;
  }

  /** A deterministic batch of inputs in [-1, 1), handy for tests and smoke checks. */
  public static float[][] sampleInput(int rows, long seed) {
    Random r = new Random(seed);
    float[][] x = new float[rows][INPUT_SIZE];
    for (float[] row : x) {
      for (int i = 0; i < INPUT_SIZE; i++) {
        row[i] = r.nextFloat() * 2f - 1f;
      }
    }
    return x;
  }

  private static boolean isFp16(String version) {
    if (VERSION_FP32.equals(version)) {
      return false;
    }
    if (VERSION_FP16.equals(version)) {
      return true;
    }
    throw new IllegalArgumentException("no demo version '" + version + "'; there are " + VERSIONS);
  }

  private static float[] uniform(Random r, int n, float scale) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (r.nextFloat() * 2f - 1f) * scale;
    }
    return v;
  }

  /** Row-major weights: w1 [8,16], b1 [16], w2 [16,4], b2 [4]. */
  private record Weights(float[] w1, float[] b1, float[] w2, float[] b2) {

    static Weights generate() {
      Random r = new Random(WEIGHT_SEED);
      return new Weights(
          uniform(r, INPUT_SIZE * HIDDEN_SIZE, 0.5f),
          uniform(r, HIDDEN_SIZE, 0.2f),
          uniform(r, HIDDEN_SIZE * OUTPUT_SIZE, 0.5f),
          uniform(r, OUTPUT_SIZE, 0.2f));
    }

    Weights roundedToFp16() {
      return new Weights(round(w1), round(b1), round(w2), round(b2));
    }

    private static float[] round(float[] v) {
      float[] out = new float[v.length];
      for (int i = 0; i < v.length; i++) {
        out[i] = OnnxGraphBuilder.roundToFp16(v[i]);
      }
      return out;
    }
  }
}

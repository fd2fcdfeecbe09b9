package io.partita.bench;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterWriter;
import io.partita.models.lora.LoraTensor;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A wider LoRA-ready model than the demo one, so adapter memory is measurable: input [N, width],
 * one layer {@code relu(x·W + (x·A)·B)} with W width x width, and adapters of the given rank
 * (A: width x rank, B: rank x width).
 */
final class LoraModels {
  static final String INPUT = "input";
  static final String A = "lora_A";
  static final String B = "lora_B";

  private LoraModels() {}

  static byte[] base(int width) {
    SplittableRandom r = new SplittableRandom(7);
    float[] w = new float[width * width];
    for (int i = 0; i < w.length; i++) {
      w[i] = (float) r.nextDouble(-0.05, 0.05);
    }
    OnnxGraphBuilder g = new OnnxGraphBuilder("bench_lora", "partita-bench");
    g.input(INPUT, DataType.FLOAT, "batch", width);
    g.inputWithDefault(A, new float[0], new long[] {width, 0}, width, "rank");
    g.inputWithDefault(B, new float[0], new long[] {0, width}, "rank", width);
    g.initializer("w", w, width, width);
    g.matMul(INPUT, "w", "base");
    g.matMul(INPUT, A, "down");
    g.matMul("down", B, "delta");
    g.add("base", "delta", "sum");
    g.relu("sum", "output");
    g.output("output", DataType.FLOAT, "batch", width);
    return g.toBytes();
  }

  static byte[] adapter(int width, int rank, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    float[] a = new float[width * rank];
    float[] b = new float[rank * width];
    for (int i = 0; i < a.length; i++) {
      a[i] = (float) r.nextDouble(-0.1, 0.1);
      b[i] = (float) r.nextDouble(-0.1, 0.1);
    }
    return LoraAdapterWriter.toBytes(LoraAdapter.of(Map.of(A, new LoraTensor(a, width, rank), B, new LoraTensor(b, rank, width))));
  }
}

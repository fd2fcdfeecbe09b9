package io.partita.profiler.onnx;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.util.SplittableRandom;

/**
 * ONNX models the profiler builds itself, byte for byte the same on every host: a one-node probe
 * model for checking that an execution provider loads, and the fixed reference model of the
 * baseline benchmark. Built with the repository's {@link OnnxGraphBuilder} (IR version and opset
 * are its own).
 */
public final class TinyModels {

  private static final String PRODUCER = "partita-profiler";

  /** Shape of the reference model: input [batch, WIDTH], LAYERS MatMul+Relu layers of WIDTH x WIDTH. */
  public static final int REFERENCE_WIDTH = 256;
  public static final int REFERENCE_LAYERS = 3;
  private static final long REFERENCE_SEED = 20260101L;

  private TinyModels() {}

  /** {@code y = Identity(x)}, x float [1]: the smallest model a provider can be asked to load. */
  public static byte[] identity() {
    return new OnnxGraphBuilder("partita-probe", PRODUCER)
        .input("x", DataType.FLOAT, 1L)
        .identity("x", "y")
        .output("y", DataType.FLOAT, 1L)
        .toBytes();
  }

  /**
   * {@code y = Identity(x)}, x float [batch, 1]: the empty model with a dynamic first dimension, so
   * that calls of one row each can be stacked into one request.
   */
  public static byte[] identityRows() {
    return new OnnxGraphBuilder("partita-identity-rows", PRODUCER)
        .input("x", DataType.FLOAT, "batch", 1L)
        .identity("x", "y")
        .output("y", DataType.FLOAT, "batch", 1L)
        .toBytes();
  }

  /**
   * The baseline benchmark's reference model: an MLP {@code x[batch, 256] -> (MatMul, Relu) x 3},
   * weights drawn from a fixed seed, so every host runs exactly the same arithmetic (about 0.4
   * MFLOP per item, 768 KiB of weights).
   */
  public static byte[] referenceMlp() {
    return mlp(REFERENCE_WIDTH, REFERENCE_LAYERS, REFERENCE_SEED);
  }

  /** An MLP with a dynamic batch dimension named {@code batch}; input {@code x}, output {@code y}. */
  public static byte[] mlp(int width, int layers, long seed) {
    if (width < 1 || layers < 1) {
      throw new IllegalArgumentException("width and layers must be at least 1, got " + width + " and " + layers);
    }
    SplittableRandom random = new SplittableRandom(seed);
    OnnxGraphBuilder graph = new OnnxGraphBuilder("partita-reference-mlp", PRODUCER)
        .input("x", DataType.FLOAT, "batch", (long) width);
    double scale = Math.sqrt(2.0 / width); // He initialisation keeps activations finite through the layers
    String in = "x";
    for (int l = 0; l < layers; l++) {
      float[] w = new float[width * width];
      for (int i = 0; i < w.length; i++) {
        w[i] = (float) ((random.nextDouble() * 2 - 1) * scale);
      }
      String out = l == layers - 1 ? "y" : "h" + l;
      graph.initializer("w" + l, w, width, width)
          .matMul(in, "w" + l, "mm" + l)
          .relu("mm" + l, out);
      in = out;
    }
    return graph.output("y", DataType.FLOAT, "batch", (long) width).toBytes();
  }
}

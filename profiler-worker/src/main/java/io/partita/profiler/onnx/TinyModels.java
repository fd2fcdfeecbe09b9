package io.partita.profiler.onnx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * ONNX models the profiler builds itself, byte for byte the same on every host: a one-node probe
 * model for checking that an execution provider loads, and the fixed reference model of the
 * baseline benchmark.
 *
 * <p>Field numbers are those of onnx.proto (ModelProto, GraphProto, NodeProto, TensorProto,
 * ValueInfoProto, TypeProto). IR version 8, opset 13.
 */
public final class TinyModels {

  private static final int FLOAT = 1; // TensorProto.DataType.FLOAT
  private static final long IR_VERSION = 8;
  private static final long OPSET = 13;

  /** Shape of the reference model: input [batch, WIDTH], LAYERS MatMul+Relu layers of WIDTH x WIDTH. */
  public static final int REFERENCE_WIDTH = 256;
  public static final int REFERENCE_LAYERS = 3;
  private static final long REFERENCE_SEED = 20260101L;

  private TinyModels() {}

  /** {@code y = Identity(x)}, x float [1]: the smallest model a provider can be asked to load. */
  public static byte[] identity() {
    ProtoWriter graph = new ProtoWriter()
        .message(1, node("Identity", "probe", new String[] {"x"}, "y"))
        .string(2, "partita-probe")
        .message(11, valueInfo("x", new long[] {1}, null))
        .message(12, valueInfo("y", new long[] {1}, null));
    return model(graph);
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
    ProtoWriter graph = new ProtoWriter();
    String in = "x";
    for (int l = 0; l < layers; l++) {
      String w = "w" + l;
      String mm = "mm" + l;
      String out = l == layers - 1 ? "y" : "h" + l;
      graph.message(1, node("MatMul", "matmul" + l, new String[] {in, w}, mm));
      graph.message(1, node("Relu", "relu" + l, new String[] {mm}, out));
      in = out;
    }
    graph.string(2, "partita-reference-mlp");
    double scale = Math.sqrt(2.0 / width); // He initialisation keeps activations finite through the layers
    for (int l = 0; l < layers; l++) {
      ByteBuffer raw = ByteBuffer.allocate(width * width * 4).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < width * width; i++) {
        raw.putFloat((float) ((random.nextDouble() * 2 - 1) * scale));
      }
      ProtoWriter tensor = new ProtoWriter()
          .varint(1, width)
          .varint(1, width)
          .varint(2, FLOAT)
          .string(8, "w" + l)
          .bytes(9, raw.array());
      graph.message(5, tensor);
    }
    graph.message(11, valueInfo("x", new long[] {-1, width}, "batch"));
    graph.message(12, valueInfo("y", new long[] {-1, width}, "batch"));
    return model(graph);
  }

  private static byte[] model(ProtoWriter graph) {
    return new ProtoWriter()
        .varint(1, IR_VERSION)
        .string(2, "partita-profiler")
        .message(7, graph)
        .message(8, new ProtoWriter().string(1, "").varint(2, OPSET))
        .toByteArray();
  }

  private static ProtoWriter node(String opType, String name, String[] inputs, String output) {
    ProtoWriter node = new ProtoWriter();
    for (String i : inputs) {
      node.string(1, i);
    }
    return node.string(2, output).string(3, name).string(4, opType);
  }

  /** A float tensor value; a dimension of -1 is symbolic and named {@code dynamicName}. */
  private static ProtoWriter valueInfo(String name, long[] dims, String dynamicName) {
    ProtoWriter shape = new ProtoWriter();
    for (long d : dims) {
      ProtoWriter dim = new ProtoWriter();
      if (d < 0) {
        dim.string(2, dynamicName);
      } else {
        dim.varint(1, d);
      }
      shape.message(1, dim);
    }
    ProtoWriter tensorType = new ProtoWriter().varint(1, FLOAT).message(2, shape);
    ProtoWriter type = new ProtoWriter().message(1, tensorType);
    return new ProtoWriter().string(1, name).message(2, type);
  }
}

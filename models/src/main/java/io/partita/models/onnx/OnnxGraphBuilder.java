package io.partita.models.onnx;

import ai.onnx.proto.OnnxMl.AttributeProto;
import ai.onnx.proto.OnnxMl.GraphProto;
import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import ai.onnx.proto.OnnxMl.OperatorSetIdProto;
import ai.onnx.proto.OnnxMl.TensorProto;
import ai.onnx.proto.OnnxMl.TensorShapeProto;
import ai.onnx.proto.OnnxMl.TypeProto;
import ai.onnx.proto.OnnxMl.ValueInfoProto;
import com.google.protobuf.ByteString;
import io.partita.models.tensor.Fp16;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Builds small ONNX graphs (MatMul, Add, Relu, Identity, Cast, Gemm, ReduceMean) in plain Java, over the protobuf classes
 * that {@code tribuo-util-onnx} ships.
 *
 * <p>Guarantees: every value name is defined at most once (a second definition throws), the model
 * is stamped with {@link #IR_VERSION} and opset {@link #OPSET} of the default domain, and
 * serialization is deterministic for the same sequence of calls (so files written from it hash the
 * same every time). It does not run ONNX shape inference or check that a node's inputs exist; ONNX
 * Runtime does that when the model is loaded.
 *
 * <p>A dimension given as a {@code String} is symbolic (dynamic, e.g. {@code "batch"}); one given as
 * a {@code Long} or {@code Integer} is fixed. {@link #inputWithDefault} declares a graph input that
 * also has an initializer: ONNX Runtime uses the initializer unless the caller (or an active LoRA
 * adapter) supplies a value of the same name.
 */
public final class OnnxGraphBuilder {

  /** IR version 8 (ONNX 1.10+): accepted by ONNX Runtime 1.29 and allows opset 17. */
  public static final long IR_VERSION = 8;

  /**
   * Default-domain opset; Gemm, MatMul, Add, Relu, Identity and Cast are all stable at 17, and
   * ReduceMean takes its axes as an attribute (from 18 they are an input).
   */
  public static final long OPSET = 17;

  private final GraphProto.Builder graph = GraphProto.newBuilder();
  private final Set<String> defined = new HashSet<>();
  private final String producer;
  private int nodeCounter;

  /**
   * @param graphName the graph's name, stored in the file
   * @param producer the producer name stored in the model (e.g. {@code partita-models})
   */
  public OnnxGraphBuilder(String graphName, String producer) {
    graph.setName(Objects.requireNonNull(graphName, "graphName"));
    this.producer = Objects.requireNonNull(producer, "producer");
  }

  /** Declares a graph input with no default; callers must feed it. */
  public OnnxGraphBuilder input(String name, TensorProto.DataType type, Object... dims) {
    define(name);
    graph.addInput(valueInfo(name, type, dims));
    return this;
  }

  /** Declares a graph output produced by some node. */
  public OnnxGraphBuilder output(String name, TensorProto.DataType type, Object... dims) {
    graph.addOutput(valueInfo(name, type, dims));
    return this;
  }

  /** Adds a constant float initializer (stored as FLOAT). */
  public OnnxGraphBuilder initializer(String name, float[] data, long... shape) {
    define(name);
    graph.addInitializer(floatTensor(name, data, shape));
    return this;
  }

  /**
   * Adds a constant initializer stored as FLOAT16: each value is rounded to the nearest half, so
   * {@link #roundToFp16(float)} of the data is what the graph holds.
   */
  public OnnxGraphBuilder initializerFp16(String name, float[] data, long... shape) {
    define(name);
    graph.addInitializer(fp16Tensor(name, data, shape));
    return this;
  }

  /**
   * Declares a FLOAT graph input {@code name} with dims {@code inputDims} (symbolic dims allowed)
   * whose default value is the given initializer. The initializer's shape must be compatible with
   * the declared dims; ONNX Runtime checks this at load time.
   */
  public OnnxGraphBuilder inputWithDefault(
      String name, float[] defaultData, long[] defaultShape, Object... inputDims) {
    define(name);
    graph.addInput(valueInfo(name, TensorProto.DataType.FLOAT, inputDims));
    graph.addInitializer(floatTensor(name, defaultData, defaultShape));
    return this;
  }

  public OnnxGraphBuilder matMul(String a, String b, String out) {
    return node("MatMul", new String[] {a, b}, out);
  }

  public OnnxGraphBuilder add(String a, String b, String out) {
    return node("Add", new String[] {a, b}, out);
  }

  public OnnxGraphBuilder relu(String in, String out) {
    return node("Relu", new String[] {in}, out);
  }

  public OnnxGraphBuilder identity(String in, String out) {
    return node("Identity", new String[] {in}, out);
  }

  /** Cast {@code in} to element type {@code to}. */
  public OnnxGraphBuilder cast(String in, TensorProto.DataType to, String out) {
    define(out);
    graph.addNode(
        NodeProto.newBuilder()
            .setOpType("Cast")
            .setName(nextNodeName("Cast"))
            .addInput(in)
            .addOutput(out)
            .addAttribute(
                AttributeProto.newBuilder()
                    .setName("to")
                    .setType(AttributeProto.AttributeType.INT)
                    .setI(to.getNumber())));
    return this;
  }

  /**
   * ReduceMean of {@code in} over {@code axes}, dropping them ({@code keepdims = 0}): a [N, T, H]
   * input reduced over axis 1 is [N, H].
   */
  public OnnxGraphBuilder reduceMean(String in, long[] axes, String out) {
    define(out);
    AttributeProto.Builder axesAttr = AttributeProto.newBuilder().setName("axes").setType(AttributeProto.AttributeType.INTS);
    for (long a : axes) {
      axesAttr.addInts(a);
    }
    graph.addNode(
        NodeProto.newBuilder()
            .setOpType("ReduceMean")
            .setName(nextNodeName("ReduceMean"))
            .addInput(in)
            .addOutput(out)
            .addAttribute(axesAttr)
            .addAttribute(
                AttributeProto.newBuilder().setName("keepdims").setType(AttributeProto.AttributeType.INT).setI(0)));
    return this;
  }

  /** Gemm: {@code out = a · b + c} (alpha = beta = 1, no transposes). */
  public OnnxGraphBuilder gemm(String a, String b, String c, String out) {
    return node("Gemm", new String[] {a, b, c}, out);
  }

  /** Builds the model proto. The builder can keep being used, but that is rarely useful. */
  public ModelProto build() {
    return ModelProto.newBuilder()
        .setIrVersion(IR_VERSION)
        .setProducerName(producer)
        .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(OPSET))
        .setGraph(graph.build())
        .build();
  }

  /** Serialized model bytes, ready to write as {@code model.onnx} or pass to ONNX Runtime. */
  public byte[] toBytes() {
    return build().toByteArray();
  }

  /** The value ONNX Runtime sees after storing {@code v} as FLOAT16 and casting back to FLOAT. */
  public static float roundToFp16(float v) {
    return Fp16.toFloat(Fp16.fromFloat(v));
  }

  private OnnxGraphBuilder node(String op, String[] inputs, String out) {
    define(out);
    NodeProto.Builder node = NodeProto.newBuilder().setOpType(op).setName(nextNodeName(op));
    for (String in : inputs) {
      node.addInput(in);
    }
    node.addOutput(out);
    graph.addNode(node);
    return this;
  }

  private String nextNodeName(String op) {
    return op.toLowerCase(Locale.ROOT) + "_" + nodeCounter++;
  }

  private void define(String name) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("value name must not be empty");
    }
    if (!defined.add(name)) {
      throw new IllegalArgumentException("value '" + name + "' is already defined in the graph");
    }
  }

  private static ValueInfoProto valueInfo(String name, TensorProto.DataType type, Object... dims) {
    TensorShapeProto.Builder shape = TensorShapeProto.newBuilder();
    for (Object d : dims) {
      TensorShapeProto.Dimension.Builder dim = TensorShapeProto.Dimension.newBuilder();
      if (d instanceof String s) {
        dim.setDimParam(s);
      } else if (d instanceof Long l) {
        dim.setDimValue(l);
      } else if (d instanceof Integer i) {
        dim.setDimValue(i);
      } else {
        throw new IllegalArgumentException(
            "dimension of '" + name + "' must be a String (symbolic) or a number, got " + d);
      }
      shape.addDim(dim);
    }
    return ValueInfoProto.newBuilder()
        .setName(name)
        .setType(
            TypeProto.newBuilder()
                .setTensorType(
                    TypeProto.Tensor.newBuilder().setElemType(type.getNumber()).setShape(shape)))
        .build();
  }

  private static TensorProto floatTensor(String name, float[] data, long[] shape) {
    checkCount(name, data.length, shape);
    ByteBuffer buf = ByteBuffer.allocate(data.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    for (float f : data) {
      buf.putFloat(f);
    }
    return tensor(name, TensorProto.DataType.FLOAT, buf.array(), shape);
  }

  private static TensorProto fp16Tensor(String name, float[] data, long[] shape) {
    checkCount(name, data.length, shape);
    ByteBuffer buf = ByteBuffer.allocate(data.length * 2).order(ByteOrder.LITTLE_ENDIAN);
    for (float f : data) {
      buf.putShort(Fp16.fromFloat(f));
    }
    return tensor(name, TensorProto.DataType.FLOAT16, buf.array(), shape);
  }

  private static TensorProto tensor(
      String name, TensorProto.DataType type, byte[] raw, long[] shape) {
    TensorProto.Builder t =
        TensorProto.newBuilder()
            .setName(name)
            .setDataType(type.getNumber())
            .setRawData(ByteString.copyFrom(raw));
    for (long d : shape) {
      t.addDims(d);
    }
    return t.build();
  }

  private static void checkCount(String name, int count, long[] shape) {
    long expected = 1;
    for (long d : shape) {
      if (d < 0) {
        throw new IllegalArgumentException("initializer '" + name + "' has a negative dimension");
      }
      expected *= d;
    }
    if (expected != count) {
      throw new IllegalArgumentException(
          "initializer '"
              + name
              + "' has "
              + count
              + " values but its shape "
              + Arrays.toString(shape)
              + " needs "
              + expected);
    }
  }
}

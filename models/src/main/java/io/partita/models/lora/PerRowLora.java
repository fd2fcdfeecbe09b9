package io.partita.models.lora;

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
import com.google.protobuf.InvalidProtocolBufferException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Rewrites a model's LoRA pairs into a per-row form, so that one ONNX Runtime call can serve rows
 * of different weight files (ONNX Runtime's adapter API activates one adapter per run).
 *
 * <p>A <b>LoRA pair</b> is {@code down = MatMul(x, A)} followed by {@code delta = MatMul(down, B)}
 * where {@code A} and {@code B} are graph inputs with default initializers (the parameters an
 * adapter overrides), each used by its MatMul only, and {@code down} used by the second MatMul
 * only. The rewrite replaces each pair with
 *
 * <pre>
 *   A_rows = Gather(A.stack [m, d, r], rows [N])     the adapters of the batch, one per row
 *   B_rows = Gather(B.stack [m, r, k], rows [N])
 *   delta  = MatMul(x, A_rows) then MatMul(., B_rows)  batched per row (x [N, d] is unsqueezed
 *                                                     to [N, 1, d] and the result squeezed back;
 *                                                     x [N, T, d] broadcasts as it is)
 * </pre>
 *
 * so each row {@code n} gets {@code x[n] · A.stack[rows[n]] · B.stack[rows[n]]}, which is what
 * the original graph computes for that row with that adapter active. {@code A.stack} and {@code
 * B.stack} are new graph inputs without defaults (the worker feeds them from the adapters it has
 * mounted, see {@link PerRowLoraFeeds}); {@code rows} is one INT64 input per graph input that
 * carries the rows of LoRA inputs, naming for each of its leading rows the adapter that applies.
 *
 * <p>A graph <b>qualifies</b> when it has at least one LoRA pair, every overridable FLOAT
 * parameter belongs to a pair (any other could be set by an adapter and would not be per row),
 * every pair's {@code x} has rank 2 or more and keeps the rows of a client-fed graph input with a
 * dynamic leading dimension (the batch axis the worker stacks requests along) as its leading axis:
 * the input itself, or row-wise operators on it (see {@code rowAligned}), the defaults of {@code A} and {@code
 * B} are rank-2 initializers of shapes [d, r0] and [r0, k], no initializer is stored as external
 * data, and the default-domain opset is 13 or newer. Otherwise {@link #rewrite} says why and the caller keeps one batch per weight file. Pure:
 * protobuf in, protobuf out; nothing is run.
 */
public final class PerRowLora {

  /** Suffix of the stacked adapter inputs: {@code fc1.lora_A} becomes {@code fc1.lora_A.stack}. */
  public static final String STACK_SUFFIX = ".stack";

  /** Suffix of the row index inputs: input {@code input} gets {@code input.lora_rows}. */
  public static final String ROWS_SUFFIX = ".lora_rows";

  private static final long MIN_OPSET = 13;

  /**
   * One LoRA pair of the rewritten graph.
   *
   * @param a the original A parameter's name (what adapters call it)
   * @param b the original B parameter's name
   * @param aStack the input fed with the batch's A matrices, [m, d, r]
   * @param bStack the input fed with the batch's B matrices, [m, r, k]
   * @param rowsInput the row index input of the pair's {@code x}
   * @param in d, the rows of A
   * @param out k, the columns of B
   * @param aDefault A's default (its initializer), used for rows whose adapter does not set A
   * @param bDefault B's default
   */
  public record Pair(String a, String b, String aStack, String bStack, String rowsInput, long in, long out,
                     LoraTensor aDefault, LoraTensor bDefault) {}

  /**
   * A rewritten model.
   *
   * @param model the per-row model
   * @param pairs its LoRA pairs, in graph order
   * @param rowsInputs for each client input that carries LoRA rows, the name of its row index input
   */
  public record Rewritten(ModelProto model, List<Pair> pairs, Map<String, String> rowsInputs) {
    public Rewritten {
      pairs = List.copyOf(pairs);
      rowsInputs = Map.copyOf(rowsInputs);
    }

    public byte[] toBytes() {
      return model.toByteArray();
    }
  }

  /**
   * What {@link #rewrite} found: the per-row model, or why the graph does not qualify.
   *
   * @param rewritten present when the graph qualifies
   * @param reason why it does not, when it does not
   */
  public record Result(Optional<Rewritten> rewritten, String reason) {
    public boolean qualifies() {
      return rewritten.isPresent();
    }
  }

  private PerRowLora() {}

  /** Rewrites serialized model bytes; a model that cannot be parsed does not qualify. */
  public static Result rewrite(byte[] model) {
    try {
      return rewrite(ModelProto.parseFrom(model));
    } catch (InvalidProtocolBufferException e) {
      return no("it is not an ONNX model: " + e.getMessage());
    }
  }

  /** Rewrites a model into its per-row form, or says why it does not qualify. */
  public static Result rewrite(ModelProto model) {
    Objects.requireNonNull(model, "model");
    long opset = 0;
    for (OperatorSetIdProto o : model.getOpsetImportList()) {
      if (o.getDomain().isEmpty() || o.getDomain().equals("ai.onnx")) {
        opset = o.getVersion();
      }
    }
    if (opset < MIN_OPSET) {
      return no("its default-domain opset is " + opset + "; the per-row form needs " + MIN_OPSET + " or newer");
    }
    GraphProto graph = model.getGraph();
    Map<String, TensorProto> initializers = new HashMap<>();
    for (TensorProto t : graph.getInitializerList()) {
      if (t.getDataLocation() == TensorProto.DataLocation.EXTERNAL) {
        // Such a model is opened from its file (its weights memory-mapped); the rewritten bytes would lose that.
        return no("initializer '" + t.getName() + "' is stored as external data");
      }
      initializers.put(t.getName(), t);
    }
    Map<String, ValueInfoProto> clientInputs = new LinkedHashMap<>();
    Map<String, ValueInfoProto> parameters = new LinkedHashMap<>();
    for (ValueInfoProto v : graph.getInputList()) {
      (initializers.containsKey(v.getName()) ? parameters : clientInputs).put(v.getName(), v);
    }
    Map<String, List<Integer>> consumers = new HashMap<>();
    Map<String, Integer> producer = new HashMap<>();
    Set<String> names = new HashSet<>(initializers.keySet());
    for (int i = 0; i < graph.getNodeCount(); i++) {
      NodeProto n = graph.getNode(i);
      for (String in : n.getInputList()) {
        consumers.computeIfAbsent(in, k -> new ArrayList<>()).add(i);
      }
      for (String out : n.getOutputList()) {
        producer.put(out, i);
        names.add(out);
      }
    }
    for (ValueInfoProto v : graph.getInputList()) {
      names.add(v.getName());
    }
    Set<String> graphOutputs = new HashSet<>();
    for (ValueInfoProto v : graph.getOutputList()) {
      graphOutputs.add(v.getName());
    }

    Map<String, Aligned> aligned = rowAligned(graph, clientInputs, initializers, parameters);

    // Find the pairs: MatMul(x, A) whose only consumer is MatMul(down, B).
    record Found(int first, int second, String x, String source, String a, String b, String down, String delta, int rank) {}
    List<Found> found = new ArrayList<>();
    Set<String> paired = new HashSet<>();
    for (int i = 0; i < graph.getNodeCount(); i++) {
      NodeProto n = graph.getNode(i);
      if (!isMatMul(n) || !parameters.containsKey(n.getInput(1)) || isLoraDown(graph, producer, parameters, n.getInput(0))) {
        continue; // not a LoRA MatMul, or the second MatMul of a pair (found from its first)
      }
      String a = n.getInput(1);
      String x = n.getInput(0);
      String down = n.getOutput(0);
      List<Integer> downUsers = consumers.getOrDefault(down, List.of());
      if (downUsers.size() != 1 || graphOutputs.contains(down)) {
        return no("LoRA parameter '" + a + "': its product '" + down + "' is used by more than the second MatMul of a pair");
      }
      NodeProto second = graph.getNode(downUsers.get(0));
      if (!isMatMul(second) || !second.getInput(0).equals(down) || !parameters.containsKey(second.getInput(1))) {
        return no("LoRA parameter '" + a + "': '" + down + "' is not multiplied by another parameter (MatMul(" + down + ", B))");
      }
      String b = second.getInput(1);
      for (String p : List.of(a, b)) {
        if (consumers.getOrDefault(p, List.of()).size() != 1 || graphOutputs.contains(p)) {
          return no("LoRA parameter '" + p + "' is used by more than one node");
        }
      }
      ValueInfoProto xInfo = clientInputs.get(x);
      if (xInfo != null) {
        if (!isFloat(xInfo) || !xInfo.getType().getTensorType().hasShape()) {
          return no("input '" + x + "' of the LoRA pair '" + a + "' is not a FLOAT tensor of declared rank");
        }
        TensorShapeProto shape = xInfo.getType().getTensorType().getShape();
        if (shape.getDimCount() >= 1 && shape.getDim(0).hasDimValue()) {
          return no("input '" + x + "' of the LoRA pair '" + a + "' has a fixed leading dimension (" + shape.getDim(0).getDimValue()
              + "), so requests cannot be stacked along it");
        }
      }
      Aligned xa = aligned.get(x);
      if (xa == null) {
        return no("LoRA parameter '" + a + "' multiplies '" + x + "', which is not known to keep the requests' rows as its"
            + " leading axis (a client input, or row-wise operators on one: see docs/models.md)");
      }
      if (xa.rank() < 2) {
        return no("'" + x + "' of the LoRA pair '" + a + "' has rank " + xa.rank() + "; it needs 2 or more");
      }
      found.add(new Found(i, downUsers.get(0), x, xa.source(), a, b, down, second.getOutput(0), xa.rank()));
      paired.add(a);
      paired.add(b);
    }
    if (found.isEmpty()) {
      return no("it has no LoRA pair (MatMul(x, A) then MatMul(., B) with A and B graph inputs that have defaults)");
    }
    for (ValueInfoProto p : parameters.values()) {
      if (!paired.contains(p.getName()) && isFloat(p) && consumers.containsKey(p.getName())) {
        return no("parameter '" + p.getName() + "' can be set by an adapter but is not part of a LoRA pair");
      }
    }

    // Build the per-row graph.
    List<Pair> pairs = new ArrayList<>();
    Map<String, String> rowsInputs = new LinkedHashMap<>();
    Map<Integer, List<NodeProto>> replaceAt = new HashMap<>();
    Set<Integer> dropped = new HashSet<>();
    Set<String> removedNames = new HashSet<>();
    List<TensorProto> newInitializers = new ArrayList<>();
    List<ValueInfoProto> newInputs = new ArrayList<>();
    int counter = 0;
    for (Found f : found) {
      LoraTensor aDefault;
      LoraTensor bDefault;
      try {
        aDefault = floats(initializers.get(f.a()));
        bDefault = floats(initializers.get(f.b()));
      } catch (IllegalArgumentException e) {
        return no(e.getMessage());
      }
      long[] as = aDefault.shape();
      long[] bs = bDefault.shape();
      if (as.length != 2 || bs.length != 2 || as[1] != bs[0]) {
        return no("the defaults of LoRA pair '" + f.a() + "' / '" + f.b() + "' are not [d, r] and [r, k]");
      }
      String rows = rowsInputs.get(f.source());
      if (rows == null) {
        rows = fresh(names, f.source() + ROWS_SUFFIX);
        rowsInputs.put(f.source(), rows);
        newInputs.add(tensorInput(rows, TensorProto.DataType.INT64, dynamic(f.source() + "_rows")));
      }
      String aStack = fresh(names, f.a() + STACK_SUFFIX);
      String bStack = fresh(names, f.b() + STACK_SUFFIX);
      String rankDim = "lora_rank_" + counter;
      newInputs.add(tensorInput(aStack, TensorProto.DataType.FLOAT, dynamic("lora_adapters"), fixed(as[0]), dynamic(rankDim)));
      newInputs.add(tensorInput(bStack, TensorProto.DataType.FLOAT, dynamic("lora_adapters"), dynamic(rankDim), fixed(bs[1])));
      pairs.add(new Pair(f.a(), f.b(), aStack, bStack, rows, as[0], bs[1], aDefault, bDefault));

      String prefix = "lora_rows_" + counter++;
      List<NodeProto> nodes = new ArrayList<>();
      String aRows = fresh(names, prefix + ".A");
      String bRows = fresh(names, prefix + ".B");
      nodes.add(gather(prefix + "_gather_a", aStack, rows, aRows));
      nodes.add(gather(prefix + "_gather_b", bStack, rows, bRows));
      if (f.rank() == 2) {
        String axes = fresh(names, prefix + ".axes");
        newInitializers.add(int64s(axes, 1));
        String x3 = fresh(names, prefix + ".x");
        String down3 = fresh(names, prefix + ".down");
        String delta3 = fresh(names, prefix + ".delta");
        nodes.add(node("Unsqueeze", prefix + "_unsqueeze_x", List.of(f.x(), axes), x3));
        nodes.add(node("MatMul", prefix + "_down", List.of(x3, aRows), down3));
        nodes.add(node("MatMul", prefix + "_up", List.of(down3, bRows), delta3));
        nodes.add(node("Squeeze", prefix + "_squeeze", List.of(delta3, axes), f.delta()));
      } else {
        if (f.rank() > 3) {
          // [N, d, r] -> [N, 1, ..., 1, d, r], so it broadcasts over x's middle axes, row by row.
          String axes = fresh(names, prefix + ".axes");
          long[] middle = new long[f.rank() - 3];
          for (int i = 0; i < middle.length; i++) {
            middle[i] = i + 1;
          }
          newInitializers.add(int64s(axes, middle));
          String aWide = fresh(names, prefix + ".A_wide");
          String bWide = fresh(names, prefix + ".B_wide");
          nodes.add(node("Unsqueeze", prefix + "_unsqueeze_a", List.of(aRows, axes), aWide));
          nodes.add(node("Unsqueeze", prefix + "_unsqueeze_b", List.of(bRows, axes), bWide));
          aRows = aWide;
          bRows = bWide;
        }
        String down = fresh(names, prefix + ".down");
        nodes.add(node("MatMul", prefix + "_down", List.of(f.x(), aRows), down));
        nodes.add(node("MatMul", prefix + "_up", List.of(down, bRows), f.delta()));
      }
      replaceAt.put(f.second(), nodes);
      dropped.add(f.first());
      removedNames.add(f.a());
      removedNames.add(f.b());
      removedNames.add(f.down());
    }

    GraphProto.Builder g = graph.toBuilder().clearNode().clearInput().clearInitializer().clearValueInfo();
    for (int i = 0; i < graph.getNodeCount(); i++) {
      if (replaceAt.containsKey(i)) {
        g.addAllNode(replaceAt.get(i));
      } else if (!dropped.contains(i)) {
        g.addNode(graph.getNode(i));
      }
    }
    for (ValueInfoProto v : graph.getInputList()) {
      if (!removedNames.contains(v.getName())) {
        g.addInput(v);
      }
    }
    g.addAllInput(newInputs);
    for (TensorProto t : graph.getInitializerList()) {
      if (!removedNames.contains(t.getName())) {
        g.addInitializer(t);
      }
    }
    g.addAllInitializer(newInitializers);
    for (ValueInfoProto v : graph.getValueInfoList()) {
      if (!removedNames.contains(v.getName())) {
        g.addValueInfo(v);
      }
    }
    ModelProto rewritten = model.toBuilder().setGraph(g).build();
    return new Result(Optional.of(new Rewritten(rewritten, pairs, rowsInputs)), null);
  }

  /** Where a value's leading rows come from: the client input whose rows they are, and the value's rank. */
  private record Aligned(String source, int rank) {}

  private static final Set<String> ROWWISE_UNARY = Set.of("Relu", "Sigmoid", "Tanh", "Erf", "Gelu", "Identity", "Cast", "Neg",
      "Exp", "Log", "Sqrt", "Abs", "LeakyRelu", "Softplus", "Elu", "Selu", "HardSigmoid", "HardSwish", "Mish", "Reciprocal",
      "Dropout");
  private static final Set<String> ELEMENTWISE_BINARY = Set.of("Add", "Sub", "Mul", "Div", "Pow");

  /**
   * The values whose leading axis is still the rows of a client input: the inputs themselves (FLOAT
   * or not, dynamic leading dimension), then, node by node, row-wise unary operators, element-wise
   * binary operators with a constant of lower rank (or another value of the same rows), MatMul and
   * Gemm by a rank-2 constant or parameter, Gather of a constant table by row-aligned indices on
   * axis 0 (an embedding lookup), and Softmax, LogSoftmax and LayerNormalization over an axis
   * other than the first. Anything else (Reshape, Transpose, Concat, ...) may move rows, so
   * its output is not row-aligned.
   */
  private static Map<String, Aligned> rowAligned(GraphProto graph, Map<String, ValueInfoProto> clientInputs,
                                                 Map<String, TensorProto> initializers, Map<String, ValueInfoProto> parameters) {
    Map<String, Aligned> aligned = new HashMap<>();
    for (ValueInfoProto v : clientInputs.values()) {
      if (v.getType().hasTensorType() && v.getType().getTensorType().hasShape()) {
        TensorShapeProto shape = v.getType().getTensorType().getShape();
        if (shape.getDimCount() >= 1 && !shape.getDim(0).hasDimValue()) {
          aligned.put(v.getName(), new Aligned(v.getName(), shape.getDimCount()));
        }
      }
    }
    Map<String, Integer> constantRank = new HashMap<>();
    for (TensorProto t : initializers.values()) {
      if (!parameters.containsKey(t.getName())) {
        constantRank.put(t.getName(), t.getDimsCount());
      }
    }
    for (ValueInfoProto p : parameters.values()) {
      if (p.getType().hasTensorType() && p.getType().getTensorType().hasShape()) {
        constantRank.put(p.getName(), p.getType().getTensorType().getShape().getDimCount()); // fixed weights, or per row
      }
    }
    for (NodeProto n : graph.getNodeList()) {
      if (n.getOutputCount() == 0 || !(n.getDomain().isEmpty() || n.getDomain().equals("ai.onnx"))) {
        continue;
      }
      String op = n.getOpType();
      String out = n.getOutput(0);
      if (op.equals("Constant")) {
        for (AttributeProto a : n.getAttributeList()) {
          if (a.getName().equals("value") && a.hasT()) {
            constantRank.put(out, a.getT().getDimsCount());
          }
        }
        continue;
      }
      if ((op.equals("Cast") || op.equals("Identity")) && constantRank.containsKey(n.getInput(0))) {
        constantRank.put(out, constantRank.get(n.getInput(0)));
        continue;
      }
      Aligned first = n.getInputCount() > 0 ? aligned.get(n.getInput(0)) : null;
      Aligned result = null;
      if (ROWWISE_UNARY.contains(op)) {
        result = first;
      } else if (ELEMENTWISE_BINARY.contains(op) && n.getInputCount() == 2) {
        Aligned second = aligned.get(n.getInput(1));
        Integer c0 = constantRank.get(n.getInput(0));
        Integer c1 = constantRank.get(n.getInput(1));
        if (first != null && second != null) {
          result = first.equals(second) ? first : null;
        } else if (first != null && c1 != null && c1 < first.rank()) {
          result = first;
        } else if (second != null && c0 != null && c0 < second.rank()) {
          result = second;
        }
      } else if (op.equals("MatMul") && n.getInputCount() == 2) {
        Integer c1 = constantRank.get(n.getInput(1));
        if (first != null && first.rank() >= 2 && c1 != null && c1 == 2) {
          result = first;
        }
      } else if (op.equals("Gemm")) {
        boolean constants = true;
        for (int i = 1; i < n.getInputCount(); i++) {
          constants &= n.getInput(i).isEmpty() || constantRank.containsKey(n.getInput(i));
        }
        if (first != null && first.rank() == 2 && constants && intAttribute(n, "transA", 0) == 0) {
          result = first;
        }
      } else if (op.equals("Gather") && n.getInputCount() == 2 && intAttribute(n, "axis", 0) == 0) {
        // An embedding lookup: table [V, D...] by row-aligned ids [N, ...] gives [N, ..., D...].
        Aligned ids = aligned.get(n.getInput(1));
        Integer table = constantRank.get(n.getInput(0));
        if (ids != null && table != null && table >= 1) {
          result = new Aligned(ids.source(), ids.rank() + table - 1);
        }
      } else if (op.equals("Softmax") || op.equals("LogSoftmax") || op.equals("LayerNormalization")) {
        if (first != null) {
          long axis = intAttribute(n, "axis", -1);
          if (axis != 0 && axis != -first.rank()) {
            result = first;
          }
        }
      }
      if (result != null) {
        aligned.put(out, result);
      }
    }
    return aligned;
  }

  private static long intAttribute(NodeProto n, String name, long fallback) {
    for (AttributeProto a : n.getAttributeList()) {
      if (a.getName().equals(name)) {
        return a.getI();
      }
    }
    return fallback;
  }

  private static Result no(String reason) {
    return new Result(Optional.empty(), reason);
  }

  private static boolean isMatMul(NodeProto n) {
    return n.getOpType().equals("MatMul") && (n.getDomain().isEmpty() || n.getDomain().equals("ai.onnx"))
        && n.getInputCount() == 2 && n.getOutputCount() == 1;
  }

  /** Whether {@code value} is the product of a first LoRA MatMul (x times a parameter). */
  private static boolean isLoraDown(GraphProto graph, Map<String, Integer> producer, Map<String, ValueInfoProto> parameters,
                                    String value) {
    Integer p = producer.get(value);
    return p != null && isMatMul(graph.getNode(p)) && parameters.containsKey(graph.getNode(p).getInput(1));
  }

  private static boolean isFloat(ValueInfoProto v) {
    return v.getType().hasTensorType() && v.getType().getTensorType().getElemType() == TensorProto.DataType.FLOAT_VALUE;
  }

  /** A name not yet used in the graph, starting from {@code wanted}. */
  private static String fresh(Set<String> names, String wanted) {
    String name = wanted;
    for (int i = 1; names.contains(name); i++) {
      name = wanted + "_" + i;
    }
    names.add(name);
    return name;
  }

  private static NodeProto node(String op, String name, List<String> inputs, String output) {
    return NodeProto.newBuilder().setOpType(op).setName(name).addAllInput(inputs).addOutput(output).build();
  }

  private static NodeProto gather(String name, String data, String indices, String output) {
    return node("Gather", name, List.of(data, indices), output).toBuilder()
        .addAttribute(AttributeProto.newBuilder().setName("axis").setType(AttributeProto.AttributeType.INT).setI(0))
        .build();
  }

  private static TensorShapeProto.Dimension dynamic(String symbol) {
    return TensorShapeProto.Dimension.newBuilder().setDimParam(symbol).build();
  }

  private static TensorShapeProto.Dimension fixed(long value) {
    return TensorShapeProto.Dimension.newBuilder().setDimValue(value).build();
  }

  private static ValueInfoProto tensorInput(String name, TensorProto.DataType type, TensorShapeProto.Dimension... dims) {
    TensorShapeProto.Builder shape = TensorShapeProto.newBuilder();
    for (TensorShapeProto.Dimension d : dims) {
      shape.addDim(d);
    }
    return ValueInfoProto.newBuilder().setName(name)
        .setType(TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(type.getNumber()).setShape(shape)))
        .build();
  }

  private static TensorProto int64s(String name, long... values) {
    ByteBuffer buf = ByteBuffer.allocate(values.length * Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    for (long v : values) {
      buf.putLong(v);
    }
    return TensorProto.newBuilder().setName(name).setDataType(TensorProto.DataType.INT64_VALUE).addDims(values.length)
        .setRawData(ByteString.copyFrom(buf.array())).build();
  }

  /** A FLOAT initializer's values (raw or in float_data); external data is refused. */
  static LoraTensor floats(TensorProto t) {
    if (t.getDataType() != TensorProto.DataType.FLOAT_VALUE) {
      throw new IllegalArgumentException("the default of LoRA parameter '" + t.getName() + "' is not FLOAT");
    }
    if (t.getDataLocation() == TensorProto.DataLocation.EXTERNAL) {
      throw new IllegalArgumentException("the default of LoRA parameter '" + t.getName() + "' is stored as external data");
    }
    long[] shape = new long[t.getDimsCount()];
    long count = 1;
    for (int i = 0; i < shape.length; i++) {
      shape[i] = t.getDims(i);
      count *= shape[i];
    }
    float[] data = new float[Math.toIntExact(count)];
    if (!t.getRawData().isEmpty()) {
      ByteBuffer buf = t.getRawData().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
      if (buf.remaining() != data.length * Float.BYTES) {
        throw new IllegalArgumentException("the default of LoRA parameter '" + t.getName() + "' has "
            + buf.remaining() + " bytes for " + data.length + " floats");
      }
      buf.asFloatBuffer().get(data);
    } else if (t.getFloatDataCount() == data.length) {
      for (int i = 0; i < data.length; i++) {
        data[i] = t.getFloatData(i);
      }
    } else if (data.length > 0) {
      throw new IllegalArgumentException("the default of LoRA parameter '" + t.getName() + "' has no readable values");
    }
    return new LoraTensor(data, shape);
  }
}

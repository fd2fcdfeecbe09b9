package io.partita.models.lora;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import io.partita.models.demo.DemoMlp;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A batch mixing weight files, run once through the per-row model in real ONNX Runtime, against
 * each request run alone through the original model with its adapter activated the usual way.
 */
class PerRowLoraOrtTest {

  private static final float TOLERANCE = 1e-5f;
  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();
  private static OrtSession.SessionOptions options;

  @BeforeAll
  static void options() throws OrtException {
    options = new OrtSession.SessionOptions();
    options.setIntraOpNumThreads(1);
    options.setSessionLogLevel(ai.onnxruntime.OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
  }

  @AfterAll
  static void close() {
    options.close();
  }

  /** One request of a mixed batch: its rows (leading dimension first) and its adapter (null = base). */
  private record Request(float[] x, long[] shape, LoraAdapter adapter) {}

  @ParameterizedTest
  @ValueSource(strings = {"1", "2"})
  void shouldAnswerMixedAdapterBatchOfDemoModelAsEachAdapterAlone(String version) throws OrtException {
    byte[] model = DemoMlp.modelBytes(version);
    PerRowLora.Result result = PerRowLora.rewrite(model);
    assertThat(result.qualifies()).as(result.reason()).isTrue();
    assertThat(result.rewritten().orElseThrow().rowsInputs()).containsOnlyKeys(DemoMlp.INPUT);

    Random random = new Random(5);
    LoraAdapter a = DemoMlp.adapter("a");
    LoraAdapter b = DemoMlp.adapter("b");
    LoraAdapter c = DemoMlp.adapter("c");
    List<Request> batch = List.of(
        demoRequest(random, 2, null), demoRequest(random, 1, a), demoRequest(random, 3, b),
        demoRequest(random, 2, a), demoRequest(random, 1, c), demoRequest(random, 1, null));

    List<float[]> mixed = runMixed(result.rewritten().orElseThrow(), DemoMlp.INPUT, DemoMlp.OUTPUT, batch);
    List<float[]> alone = runAlone(model, DemoMlp.INPUT, DemoMlp.OUTPUT, batch);
    assertEqualWithin(mixed, alone);
    // The adapters really act per row: same-looking rows of different adapters would differ.
    assertThat(maxAbsDiff(alone.get(1), runAlone(model, DemoMlp.INPUT, DemoMlp.OUTPUT,
        List.of(new Request(batch.get(1).x(), batch.get(1).shape(), c))).get(0))).isGreaterThan(0.01f);
  }

  @ParameterizedTest
  @ValueSource(ints = {3, 4})
  void shouldAnswerMixedAdapterBatchOfTokenModelAsEachAdapterAlone(int rank) throws OrtException {
    // [batch, tokens, features] (and [batch, heads, tokens, features]); adapters of ranks 2 and 3.
    byte[] model = tokenModel(rank);
    PerRowLora.Result result = PerRowLora.rewrite(model);
    assertThat(result.qualifies()).as(result.reason()).isTrue();

    Random random = new Random(9);
    LoraAdapter r2 = tokenAdapter(random, 2);
    LoraAdapter r3 = tokenAdapter(random, 3);
    long[] oneRow = rank == 3 ? new long[] {1, TOKENS, FEATURES} : new long[] {1, 2, TOKENS, FEATURES};
    List<Request> batch = new ArrayList<>();
    LoraAdapter[] order = {r2, null, r3, r2, r3};
    for (int i = 0; i < order.length; i++) {
      long[] shape = oneRow.clone();
      shape[0] = 1 + i % 2;
      batch.add(new Request(uniform(random, count(shape)), shape, order[i]));
    }
    List<float[]> mixed = runMixed(result.rewritten().orElseThrow(), "tokens", "hidden", batch);
    List<float[]> alone = runAlone(model, "tokens", "hidden", batch);
    assertEqualWithin(mixed, alone);
    assertThat(maxAbsDiff(alone.get(0), runAlone(model, "tokens", "hidden",
        List.of(new Request(batch.get(0).x(), batch.get(0).shape(), r3))).get(0))).isGreaterThan(0.01f);
  }

  @Test
  void shouldAnswerBatchWithoutAnyAdapterAsTheBaseModel() throws OrtException {
    byte[] model = DemoMlp.modelBytes(DemoMlp.VERSION_FP32);
    PerRowLora.Rewritten rewritten = PerRowLora.rewrite(model).rewritten().orElseThrow();
    Random random = new Random(1);
    List<Request> batch = List.of(demoRequest(random, 3, null), demoRequest(random, 2, null));
    assertEqualWithin(runMixed(rewritten, DemoMlp.INPUT, DemoMlp.OUTPUT, batch),
        runAlone(model, DemoMlp.INPUT, DemoMlp.OUTPUT, batch));
  }

  @Test
  void shouldAnswerMixedAdapterBatchOfLoraOnHiddenLayersAsEachAdapterAlone() throws OrtException {
    // Token ids -> embedding -> LayerNorm -> layer 1 with LoRA -> relu -> layer 2 with LoRA: the LoRA inputs are computed.
    byte[] model = hiddenLoraModel(false);
    PerRowLora.Result result = PerRowLora.rewrite(model);
    assertThat(result.qualifies()).as(result.reason()).isTrue();
    PerRowLora.Rewritten rewritten = result.rewritten().orElseThrow();
    assertThat(rewritten.pairs()).hasSize(2);
    assertThat(rewritten.rowsInputs()).containsOnlyKeys("ids");

    Random random = new Random(21);
    LoraAdapter p = hiddenAdapter(random, 2, true, true);
    LoraAdapter q = hiddenAdapter(random, 3, true, false); // sets the first layer only: the second keeps its default
    LoraAdapter[] order = {p, q, null, q, p};
    List<long[]> ids = new ArrayList<>();
    for (int i = 0; i < order.length; i++) {
      long[] row = new long[(1 + i % 2) * TOKENS];
      for (int t = 0; t < row.length; t++) {
        row[t] = random.nextInt(VOCAB);
      }
      ids.add(row);
    }
    List<float[]> mixed = new ArrayList<>();
    List<float[]> alone = new ArrayList<>();
    runIds(rewritten, model, ids, order, mixed, alone);
    assertEqualWithin(mixed, alone);
    assertThat(maxAbsDiff(alone.get(0), alone.get(1))).isGreaterThan(0.01f);
  }

  @Test
  void shouldRefuseGraphWhoseLoraInputMayMoveRows() {
    PerRowLora.Result result = PerRowLora.rewrite(hiddenLoraModel(true));
    assertThat(result.qualifies()).isFalse();
    assertThat(result.reason()).contains("'moved'").contains("not known to keep the requests' rows");
  }

  @Test
  void shouldRefuseGraphWithParameterOutsideLoraPair() {
    OnnxGraphBuilder g = new OnnxGraphBuilder("bias_param", "test");
    g.input("x", DataType.FLOAT, "batch", 4);
    g.inputWithDefault("A", new float[0], new long[] {4, 0}, 4, "r");
    g.inputWithDefault("B", new float[0], new long[] {0, 4}, "r", 4);
    g.inputWithDefault("bias", new float[4], new long[] {4}, 4);
    g.matMul("x", "A", "down");
    g.matMul("down", "B", "delta");
    g.add("delta", "bias", "y");
    g.output("y", DataType.FLOAT, "batch", 4);
    PerRowLora.Result result = PerRowLora.rewrite(g.toBytes());
    assertThat(result.qualifies()).isFalse();
    assertThat(result.reason()).contains("'bias'").contains("not part of a LoRA pair");
  }

  @Test
  void shouldRefuseGraphWithoutLoraPair() {
    OnnxGraphBuilder g = new OnnxGraphBuilder("plain", "test");
    g.input("x", DataType.FLOAT, "batch", 4);
    g.initializer("w", uniform(new Random(1), 16), 4, 4);
    g.matMul("x", "w", "y");
    g.output("y", DataType.FLOAT, "batch", 4);
    assertThat(PerRowLora.rewrite(g.toBytes()).reason()).contains("no LoRA pair");
  }

  @Test
  void shouldPadAdaptersOfDifferentRanksWithZeros() {
    PerRowLora.Rewritten rewritten = PerRowLora.rewrite(tokenModel(3)).rewritten().orElseThrow();
    Random random = new Random(3);
    LoraAdapter r2 = tokenAdapter(random, 2);
    List<PerRowLoraFeeds.Stacked> stacks = PerRowLoraFeeds.stacks(rewritten, Arrays.asList(null, r2, tokenAdapter(random, 3)));
    PerRowLoraFeeds.Stacked a = stacks.get(0);
    assertThat(a.shape()).containsExactly(3, FEATURES, 3);
    float[] a2 = r2.parameter("lora_A").data();
    FloatBuffer stacked = a.data();
    assertThat(stacked.remaining()).isEqualTo(3 * FEATURES * 3);
    for (int i = 0; i < FEATURES; i++) {
      assertThat(stacked.get((0 * FEATURES + i) * 3)).isZero(); // the base row: the rank-0 default, padded
      assertThat(stacked.get((FEATURES + i) * 3)).isEqualTo(a2[i * 2]);
      assertThat(stacked.get((FEATURES + i) * 3 + 1)).isEqualTo(a2[i * 2 + 1]);
      assertThat(stacked.get((FEATURES + i) * 3 + 2)).isZero();
    }
    PerRowLoraFeeds.Stacked b = stacks.get(1);
    assertThat(b.shape()).containsExactly(3, 3, HIDDEN);
    float[] b2 = r2.parameter("lora_B").data();
    for (int o = 0; o < HIDDEN; o++) {
      assertThat(b.data().get((3 + 0) * HIDDEN + o)).isEqualTo(b2[o]);
      assertThat(b.data().get((3 + 2) * HIDDEN + o)).isZero(); // rank 2 padded to 3
    }
    assertThat(PerRowLoraFeeds.rowIndex(new int[] {2, 1, 3}, new int[] {1, 0, 2})).containsExactly(1, 1, 0, 2, 2, 2);
  }

  // --- models and runs -------------------------------------------------------------------------

  private static final int FEATURES = 6;
  private static final int HIDDEN = 5;
  private static final int TOKENS = 3;

  /** y = x·W + (x·A)·B + bias over the last axis, x of the given rank (3: [batch, tokens, 6]). */
  private static byte[] tokenModel(int rank) {
    Random r = new Random(42);
    OnnxGraphBuilder g = new OnnxGraphBuilder("token_lora", "test");
    Object[] dims = rank == 3 ? new Object[] {"batch", "tokens", FEATURES} : new Object[] {"batch", "heads", "tokens", FEATURES};
    Object[] outDims = dims.clone();
    outDims[outDims.length - 1] = HIDDEN;
    g.input("tokens", DataType.FLOAT, dims);
    g.inputWithDefault("lora_A", new float[0], new long[] {FEATURES, 0}, FEATURES, "r");
    g.inputWithDefault("lora_B", new float[0], new long[] {0, HIDDEN}, "r", HIDDEN);
    g.initializer("w", uniform(r, FEATURES * HIDDEN), FEATURES, HIDDEN);
    g.initializer("bias", uniform(r, HIDDEN), HIDDEN);
    g.matMul("tokens", "w", "base");
    g.matMul("tokens", "lora_A", "down");
    g.matMul("down", "lora_B", "delta");
    g.add("base", "delta", "sum");
    g.add("sum", "bias", "hidden");
    g.output("hidden", DataType.FLOAT, outDims);
    return g.toBytes();
  }

  private static final int VOCAB = 11;

  /**
   * ids [batch, tokens] INT64 -> Gather(embedding [11, 6]) -> LayerNormalization -> x·W1 + (x·A1)·B1 + b1 -> relu ->
   * h·W2 + (h·A2)·B2 -> out [batch, tokens, 5]. With {@code transpose}, layer 1's LoRA input is transposed twice first
   * (the same values, but through an operator that may move rows, so the graph no longer qualifies).
   */
  private static byte[] hiddenLoraModel(boolean transpose) {
    Random r = new Random(77);
    OnnxGraphBuilder g = new OnnxGraphBuilder("hidden_lora", "test");
    g.input("ids", DataType.INT64, "batch", "tokens");
    g.initializer("embedding", uniform(r, VOCAB * FEATURES), VOCAB, FEATURES);
    g.initializer("ln.scale", uniform(r, FEATURES), FEATURES);
    g.initializer("ln.bias", uniform(r, FEATURES), FEATURES);
    g.inputWithDefault("l1.lora_A", new float[0], new long[] {FEATURES, 0}, FEATURES, "r1");
    g.inputWithDefault("l1.lora_B", new float[0], new long[] {0, HIDDEN}, "r1", HIDDEN);
    g.inputWithDefault("l2.lora_A", new float[0], new long[] {HIDDEN, 0}, HIDDEN, "r2");
    g.inputWithDefault("l2.lora_B", new float[0], new long[] {0, HIDDEN}, "r2", HIDDEN);
    g.initializer("w1", uniform(r, FEATURES * HIDDEN), FEATURES, HIDDEN);
    g.initializer("b1", uniform(r, HIDDEN), HIDDEN);
    g.initializer("w2", uniform(r, HIDDEN * HIDDEN), HIDDEN, HIDDEN);
    ai.onnx.proto.OnnxMl.ModelProto.Builder m = ai.onnx.proto.OnnxMl.ModelProto.newBuilder(g.build());
    ai.onnx.proto.OnnxMl.GraphProto.Builder graph = m.getGraphBuilder();
    graph.addNode(node("Gather", List.of("embedding", "ids"), "emb"));
    graph.addNode(node("LayerNormalization", List.of("emb", "ln.scale", "ln.bias"), "x"));
    String loraIn = "x";
    if (transpose) {
      graph.addNode(node("Transpose", List.of("x"), "t"));
      graph.addNode(node("Transpose", List.of("t"), "moved"));
      loraIn = "moved";
    }
    graph.addNode(node("MatMul", List.of("x", "w1"), "base1"));
    graph.addNode(node("MatMul", List.of(loraIn, "l1.lora_A"), "down1"));
    graph.addNode(node("MatMul", List.of("down1", "l1.lora_B"), "delta1"));
    graph.addNode(node("Add", List.of("base1", "delta1"), "sum1"));
    graph.addNode(node("Add", List.of("sum1", "b1"), "pre1"));
    graph.addNode(node("Relu", List.of("pre1"), "h"));
    graph.addNode(node("MatMul", List.of("h", "w2"), "base2"));
    graph.addNode(node("MatMul", List.of("h", "l2.lora_A"), "down2"));
    graph.addNode(node("MatMul", List.of("down2", "l2.lora_B"), "delta2"));
    graph.addNode(node("Add", List.of("base2", "delta2"), "out"));
    g.output("out", DataType.FLOAT, "batch", "tokens", HIDDEN);
    graph.clearOutput().addAllOutput(g.build().getGraph().getOutputList());
    return m.build().toByteArray();
  }

  private static ai.onnx.proto.OnnxMl.NodeProto node(String op, List<String> inputs, String output) {
    return ai.onnx.proto.OnnxMl.NodeProto.newBuilder().setOpType(op).setName(output + "_" + op).addAllInput(inputs)
        .addOutput(output).build();
  }

  private static LoraAdapter hiddenAdapter(Random r, int rank, boolean first, boolean second) {
    Map<String, LoraTensor> p = new HashMap<>();
    if (first) {
      p.put("l1.lora_A", new LoraTensor(uniform(r, FEATURES * rank), FEATURES, rank));
      p.put("l1.lora_B", new LoraTensor(uniform(r, rank * HIDDEN), rank, HIDDEN));
    }
    if (second) {
      p.put("l2.lora_A", new LoraTensor(uniform(r, HIDDEN * rank), HIDDEN, rank));
      p.put("l2.lora_B", new LoraTensor(uniform(r, rank * HIDDEN), rank, HIDDEN));
    }
    return LoraAdapter.of(p);
  }

  /** Token-id requests: all in one per-row run ({@code mixed}), and each alone with its adapter activated ({@code alone}). */
  private static void runIds(PerRowLora.Rewritten rewritten, byte[] model, List<long[]> ids, LoraAdapter[] adapters,
                             List<float[]> mixed, List<float[]> alone) throws OrtException {
    List<LoraAdapter> distinct = new ArrayList<>();
    int[] rows = new int[ids.size()];
    int[] adapterOf = new int[ids.size()];
    int total = 0;
    for (int i = 0; i < ids.size(); i++) {
      int j = distinct.indexOf(adapters[i]);
      if (j < 0) {
        j = distinct.size();
        distinct.add(adapters[i]);
      }
      adapterOf[i] = j;
      rows[i] = ids.get(i).length / TOKENS;
      total += rows[i];
    }
    long[] all = new long[total * TOKENS];
    int at = 0;
    for (long[] row : ids) {
      System.arraycopy(row, 0, all, at, row.length);
      at += row.length;
    }
    Map<String, OnnxTensor> feeds = new HashMap<>();
    try (OrtSession session = ENV.createSession(rewritten.toBytes(), options)) {
      feeds.put("ids", OnnxTensor.createTensor(ENV, LongBuffer.wrap(all), new long[] {total, TOKENS}));
      long[] index = PerRowLoraFeeds.rowIndex(rows, adapterOf);
      feeds.put(rewritten.rowsInputs().get("ids"), OnnxTensor.createTensor(ENV, LongBuffer.wrap(index), new long[] {index.length}));
      for (PerRowLoraFeeds.Stacked s : PerRowLoraFeeds.stacks(rewritten, distinct)) {
        feeds.put(s.name(), OnnxTensor.createTensor(ENV, s.data(), s.shape()));
      }
      try (OrtSession.Result result = session.run(feeds)) {
        float[] y = flat((OnnxTensor) result.get("out").orElseThrow());
        int perRow = y.length / total;
        int row = 0;
        for (int r : rows) {
          mixed.add(Arrays.copyOfRange(y, row * perRow, (row + r) * perRow));
          row += r;
        }
      }
    } finally {
      feeds.values().forEach(OnnxTensor::close);
    }
    try (OrtSession session = ENV.createSession(model, options)) {
      for (int i = 0; i < ids.size(); i++) {
        try (OnnxTensor x = OnnxTensor.createTensor(ENV, LongBuffer.wrap(ids.get(i)), new long[] {rows[i], TOKENS});
             OrtLoraAdapter adapter = adapters[i] == null ? null : OrtLoraAdapter.create(LoraAdapterWriter.toBytes(adapters[i]));
             OrtSession.RunOptions run = new OrtSession.RunOptions()) {
          if (adapter != null) {
            run.addActiveLoraAdapter(adapter);
          }
          try (OrtSession.Result result = session.run(Map.of("ids", x), run)) {
            alone.add(flat((OnnxTensor) result.get("out").orElseThrow()));
          }
        }
      }
    }
  }

  private static LoraAdapter tokenAdapter(Random r, int rank) {
    return LoraAdapter.of(Map.of(
        "lora_A", new LoraTensor(uniform(r, FEATURES * rank), FEATURES, rank),
        "lora_B", new LoraTensor(uniform(r, rank * HIDDEN), rank, HIDDEN)));
  }

  private static Request demoRequest(Random r, int rows, LoraAdapter adapter) {
    return new Request(uniform(r, rows * DemoMlp.INPUT_SIZE), new long[] {rows, DemoMlp.INPUT_SIZE}, adapter);
  }

  /** The whole batch in one run of the per-row model; each request's output slice. */
  private static List<float[]> runMixed(PerRowLora.Rewritten model, String input, String output, List<Request> batch)
      throws OrtException {
    List<LoraAdapter> distinct = new ArrayList<>();
    int[] rows = new int[batch.size()];
    int[] adapterOf = new int[batch.size()];
    int total = 0;
    int rowSize = 0;
    for (int i = 0; i < batch.size(); i++) {
      Request q = batch.get(i);
      int j = distinct.indexOf(q.adapter());
      if (j < 0) {
        j = distinct.size();
        distinct.add(q.adapter());
      }
      adapterOf[i] = j;
      rows[i] = (int) q.shape()[0];
      total += rows[i];
      rowSize = q.x().length / rows[i];
    }
    float[] x = new float[total * rowSize];
    int at = 0;
    for (Request q : batch) {
      System.arraycopy(q.x(), 0, x, at, q.x().length);
      at += q.x().length;
    }
    long[] shape = batch.get(0).shape().clone();
    shape[0] = total;
    Map<String, OnnxTensor> feeds = new HashMap<>();
    try (OrtSession session = ENV.createSession(model.toBytes(), options)) {
      feeds.put(input, OnnxTensor.createTensor(ENV, FloatBuffer.wrap(x), shape));
      long[] index = PerRowLoraFeeds.rowIndex(rows, adapterOf);
      feeds.put(model.rowsInputs().get(input), OnnxTensor.createTensor(ENV, LongBuffer.wrap(index), new long[] {index.length}));
      for (PerRowLoraFeeds.Stacked s : PerRowLoraFeeds.stacks(model, distinct)) {
        feeds.put(s.name(), OnnxTensor.createTensor(ENV, s.data(), s.shape()));
      }
      try (OrtSession.Result result = session.run(feeds)) {
        float[] y = flat((OnnxTensor) result.get(output).orElseThrow());
        int outRow = y.length / total;
        List<float[]> out = new ArrayList<>();
        int row = 0;
        for (int r : rows) {
          out.add(Arrays.copyOfRange(y, row * outRow, (row + r) * outRow));
          row += r;
        }
        return out;
      }
    } finally {
      feeds.values().forEach(OnnxTensor::close);
    }
  }

  /** Each request alone through the original model, its adapter activated with ONNX Runtime's API. */
  private static List<float[]> runAlone(byte[] model, String input, String output, List<Request> batch) throws OrtException {
    List<float[]> out = new ArrayList<>();
    try (OrtSession session = ENV.createSession(model, options)) {
      for (Request q : batch) {
        try (OnnxTensor x = OnnxTensor.createTensor(ENV, FloatBuffer.wrap(q.x()), q.shape());
             OrtLoraAdapter adapter = q.adapter() == null ? null : OrtLoraAdapter.create(LoraAdapterWriter.toBytes(q.adapter()));
             OrtSession.RunOptions run = new OrtSession.RunOptions()) {
          if (adapter != null) {
            run.addActiveLoraAdapter(adapter);
          }
          try (OrtSession.Result result = session.run(Map.of(input, x), run)) {
            out.add(flat((OnnxTensor) result.get(output).orElseThrow()));
          }
        }
      }
    }
    return out;
  }

  private static float[] flat(OnnxTensor t) {
    FloatBuffer b = t.getFloatBuffer();
    float[] v = new float[b.remaining()];
    b.get(v);
    return v;
  }

  private static void assertEqualWithin(List<float[]> mixed, List<float[]> alone) {
    assertThat(mixed).hasSameSizeAs(alone);
    for (int i = 0; i < mixed.size(); i++) {
      assertThat(mixed.get(i)).as("request %s", i).hasSameSizeAs(alone.get(i));
      assertThat(maxAbsDiff(mixed.get(i), alone.get(i))).as("request %s", i).isLessThanOrEqualTo(TOLERANCE);
    }
  }

  private static float maxAbsDiff(float[] x, float[] y) {
    float m = 0;
    for (int i = 0; i < x.length; i++) {
      m = Math.max(m, Math.abs(x[i] - y[i]));
    }
    return m;
  }

  private static int count(long[] shape) {
    long n = 1;
    for (long d : shape) {
      n *= d;
    }
    return Math.toIntExact(n);
  }

  private static float[] uniform(Random r, int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = r.nextFloat() * 2f - 1f;
    }
    return v;
  }
}

package io.partita.bench;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import io.partita.avro.Tensor;
import io.partita.launcher.cluster.InferBodies;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import io.partita.profiler.measure.Measurer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A model the benchmark drives: its file, signature, and how to make a random float input of a
 * given batch size (dynamic dimensions past the batch take the sizes in {@code dims}).
 */
record BenchModel(String name, Path file, ModelSignature signature, Map<Integer, Long> dims, String origin) {

  static BenchModel of(String name, Path file, Map<Integer, Long> dims, String origin) throws IOException {
    return new BenchModel(name, file, ModelSignature.read(file), dims, origin);
  }

  TensorSpec input() {
    if (signature.inputs().size() != 1) {
      throw new IllegalStateException(name + ": the benchmark drives single-input models only");
    }
    return signature.inputs().get(0);
  }

  /**
   * The sizes of {@code dims} by the names the model gives those dimensions, as the profiler takes
   * them ({@code --dim NAME=SIZE}); opens the model once to read the names.
   */
  Map<String, Long> namedDims(OrtEnvironment env) throws OrtException {
    Map<String, Long> named = new HashMap<>();
    try (OrtSession session = env.createSession(file.toString(), new OrtSession.SessionOptions())) {
      for (NodeInfo node : session.getInputInfo().values()) {
        if (node.getInfo() instanceof TensorInfo info && info.getDimensionNames() != null) {
          String[] names = info.getDimensionNames();
          dims.forEach((d, size) -> {
            if (d < names.length && names[d] != null && !names[d].isEmpty()) {
              named.put(names[d], size);
            }
          });
        }
      }
    }
    return named;
  }

  /** The profiler's measuring settings for this model: the given budget, its dimensions by name. */
  Measurer.Settings profilerSettings(OrtEnvironment env, long budgetMs) throws OrtException {
    Measurer.Settings budget = Measurer.Settings.ofBudgetMillis(budgetMs);
    return new Measurer.Settings(budget.sampler(), namedDims(env), budget.commands(),
        budget.measureMemory(), budget.spinning());
  }

  long[] shape(int batch) {
    return InferBodies.shape(input(), batch, dims);
  }

  float[] randomData(int batch, long seed) {
    return InferBodies.randomFloats(InferBodies.elements(shape(batch)), seed);
  }

  OnnxTensor ortInput(OrtEnvironment env, int batch, long seed) throws OrtException {
    return OnnxTensor.createTensor(env, FloatBuffer.wrap(randomData(batch, seed)), shape(batch));
  }

  Tensor wireInput(int batch, long seed) {
    float[] data = randomData(batch, seed);
    ByteBuffer bytes = ByteBuffer.allocate(data.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float f : data) {
      bytes.putFloat(f);
    }
    bytes.flip();
    List<Long> shape = new ArrayList<>();
    for (long s : shape(batch)) {
      shape.add(s);
    }
    return Tensor.newBuilder().setName(input().name()).setDatatype("FP32").setShape(shape).setData(bytes).build();
  }

  /** {@code {"inputs":[{"name":"x","datatype":"FP32","shape":[1,8}: the body up to the shape's end. */
  private StringBuilder inputHead(int batch) {
    StringBuilder b = new StringBuilder("{\"inputs\":[{\"name\":\"").append(input().name()).append("\",\"datatype\":\"FP32\",\"shape\":[");
    long[] shape = shape(batch);
    for (int i = 0; i < shape.length; i++) {
      b.append(i == 0 ? "" : ",").append(shape[i]);
    }
    return b;
  }

  String jsonBody(int batch, long seed) {
    input(); // single-input models only, as everywhere in the benchmark
    return InferBodies.json(signature, batch, dims, seed);
  }

  /**
   * An infer body in the OIP binary tensor data extension: a JSON header declaring the input's
   * {@code binary_data_size} and asking for binary outputs, then the input's raw little-endian
   * floats; {@code headerLength} goes in {@code Inference-Header-Content-Length}.
   */
  record BinaryBody(byte[] bytes, int headerLength) {}

  BinaryBody binaryBody(int batch, long seed) {
    float[] data = randomData(batch, seed);
    StringBuilder h = inputHead(batch);
    h.append("],\"parameters\":{\"binary_data_size\":").append(data.length * 4).append("}}],\"parameters\":{\"binary_data_output\":true}}");
    byte[] header = h.toString().getBytes(StandardCharsets.UTF_8);
    ByteBuffer body = ByteBuffer.allocate(header.length + data.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    body.put(header);
    for (float f : data) {
      body.putFloat(f);
    }
    return new BinaryBody(body.array(), header.length);
  }
}

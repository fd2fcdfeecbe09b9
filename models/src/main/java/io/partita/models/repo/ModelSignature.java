package io.partita.models.repo;

import ai.onnx.proto.OnnxMl;
import com.google.protobuf.CodedInputStream;
import io.partita.models.lora.LoraAdapter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The inputs a caller must feed and the outputs a model returns, as ONNX Runtime reports them, and
 * the model's overridable parameters, read from the ONNX file ({@link #read}) without ONNX Runtime.
 *
 * <p>Graph inputs that have a default initializer (such as LoRA parameters) are not in {@code
 * inputs}: ONNX Runtime hides them from {@code getInputInfo()}, and only an active adapter can
 * override them, so they are not part of what a client sends. They are listed in {@code parameters}
 * instead, so that a
 * worker can check an adapter with {@link #checkAdapter} before it mounts it; ONNX Runtime itself
 * only notices a wrong name or shape when a run uses the adapter.
 *
 * @param inputs what a client feeds
 * @param outputs what a run returns
 * @param parameters graph inputs with defaults
 */
public record ModelSignature(
    List<TensorSpec> inputs, List<TensorSpec> outputs, List<TensorSpec> parameters) {

  public ModelSignature {
    inputs = List.copyOf(inputs);
    outputs = List.copyOf(outputs);
    parameters = List.copyOf(parameters);
  }

  /** A signature without overridable parameters. */
  public ModelSignature(List<TensorSpec> inputs, List<TensorSpec> outputs) {
    this(inputs, outputs, List.of());
  }

  public Optional<TensorSpec> parameter(String name) {
    return parameters.stream().filter(t -> t.name().equals(name)).findFirst();
  }

  /**
   * Whether {@code adapter} fits this model: every adapter parameter names an overridable FLOAT
   * parameter and its shape fits the declared one (dynamic dimensions match anything).
   *
   * @return empty if it fits, otherwise a message naming the first parameter at fault
   */
  public Optional<String> checkAdapter(LoraAdapter adapter) {
    for (var e : adapter.parameters().entrySet()) {
      Optional<TensorSpec> p = parameter(e.getKey());
      if (p.isEmpty()) {
        return Optional.of(
            "adapter parameter '" + e.getKey() + "' is not an overridable input of the model; it has "
                + parameters.stream().map(TensorSpec::name).toList());
      }
      if (p.get().type() != ElementType.FLOAT) {
        return Optional.of(
            "adapter parameter '" + e.getKey() + "' is FLOAT but the model declares "
                + p.get().type());
      }
      long[] shape = e.getValue().shape();
      if (!p.get().accepts(shape)) {
        return Optional.of(
            "adapter parameter '" + e.getKey() + "' has shape " + Arrays.toString(shape)
                + " but the model declares " + p.get().shape() + " (-1 = any)");
      }
    }
    return Optional.empty();
  }

  public Optional<TensorSpec> input(String name) {
    return inputs.stream().filter(t -> t.name().equals(name)).findFirst();
  }

  public Optional<TensorSpec> output(String name) {
    return outputs.stream().filter(t -> t.name().equals(name)).findFirst();
  }

  /**
   * Reads the signature of an ONNX model file from its protobuf, as ONNX Runtime would report it
   * when it opens the file: the graph inputs without an initializer are {@code inputs}, those with
   * one are {@code parameters}, and the graph outputs are {@code outputs}, each in the order the
   * graph declares them. A dimension with a fixed value keeps it; a symbolic or unknown one is -1. A
   * value that is not a tensor (a sequence or a map) is {@link ElementType#OTHER} with no shape.
   *
   * <p>It reads the file, not the graph's semantics: a well-formed protobuf whose graph ONNX Runtime
   * would refuse (an unknown operator, a missing node input) is read; the session that opens it
   * fails.
   *
   * @throws IOException when the file cannot be read, is not an ONNX protobuf, or has no graph
   *     outputs
   */
  public static ModelSignature read(Path modelFile) throws IOException {
    OnnxMl.GraphProto graph;
    try (InputStream in = Files.newInputStream(modelFile)) {
      CodedInputStream coded = CodedInputStream.newInstance(in);
      coded.setSizeLimit(Integer.MAX_VALUE);
      graph = OnnxMl.ModelProto.parseFrom(coded).getGraph();
    }
    if (graph.getOutputCount() == 0) {
      throw new IOException("it is not an ONNX model: it has no graph outputs");
    }
    Set<String> initialized = new HashSet<>();
    for (OnnxMl.TensorProto t : graph.getInitializerList()) {
      initialized.add(t.getName());
    }
    for (OnnxMl.SparseTensorProto t : graph.getSparseInitializerList()) {
      initialized.add(t.getValues().getName());
    }
    List<TensorSpec> inputs = new ArrayList<>();
    List<TensorSpec> parameters = new ArrayList<>();
    for (OnnxMl.ValueInfoProto v : graph.getInputList()) {
      (initialized.contains(v.getName()) ? parameters : inputs).add(spec(v));
    }
    List<TensorSpec> outputs = new ArrayList<>();
    for (OnnxMl.ValueInfoProto v : graph.getOutputList()) {
      outputs.add(spec(v));
    }
    return new ModelSignature(inputs, outputs, parameters);
  }

  private static TensorSpec spec(OnnxMl.ValueInfoProto v) {
    if (!v.getType().hasTensorType()) {
      return new TensorSpec(v.getName(), ElementType.OTHER, List.of());
    }
    OnnxMl.TypeProto.Tensor t = v.getType().getTensorType();
    List<Long> dims = new ArrayList<>();
    for (OnnxMl.TensorShapeProto.Dimension d : t.getShape().getDimList()) {
      dims.add(d.hasDimValue() && d.getDimValue() >= 0 ? d.getDimValue() : -1L);
    }
    return new TensorSpec(v.getName(), ElementType.fromOnnxDataType(t.getElemType()), dims);
  }
}

package io.partita.models.repo;

import ai.onnx.proto.OnnxMl;
import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
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
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The inputs a caller must feed and the outputs a model returns, as ONNX Runtime reports them, and
 * the model's overridable parameters.
 *
 * <p>Graph inputs that have a default initializer (such as LoRA parameters) are not in {@code
 * inputs}: ONNX Runtime hides them from {@code getInputInfo()}, and only an active adapter can
 * override them, so they are not part of what a client sends. They are listed in {@code parameters}
 * instead (read from the ONNX file itself, since ONNX Runtime does not report them), so that a
 * worker can check an adapter with {@link #checkAdapter} before it mounts it; ONNX Runtime itself
 * only notices a wrong name or shape when a run uses the adapter.
 *
 * @param inputs what a client feeds
 * @param outputs what a run returns
 * @param parameters graph inputs with defaults; empty when built with {@link #of(OrtSession)}
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

  /** Reads the signature of an open session. */
  public static ModelSignature of(OrtSession session) throws OrtException {
    return new ModelSignature(specs(session.getInputInfo()), specs(session.getOutputInfo()));
  }

  /**
   * Opens {@code modelFile} in a short-lived single-threaded session, without graph optimizations,
   * and reads its signature.
   */
  public static ModelSignature read(Path modelFile) throws OrtException {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions()) {
      opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.NO_OPT);
      opts.setIntraOpNumThreads(1);
      opts.setInterOpNumThreads(1);
      // Loading a model whose LoRA inputs have defaults logs a warning per input at WARNING level;
      // that is the intended design here, so only errors are logged.
      opts.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
      ModelSignature fromOrt;
      try (OrtSession session = env.createSession(modelFile.toString(), opts)) {
        fromOrt = of(session);
      }
      return new ModelSignature(fromOrt.inputs(), fromOrt.outputs(), parameters(modelFile));
    }
  }

  /** Graph inputs that also have an initializer, read from the ONNX protobuf. */
  private static List<TensorSpec> parameters(Path modelFile) throws OrtException {
    OnnxMl.GraphProto graph;
    try (InputStream in = Files.newInputStream(modelFile)) {
      CodedInputStream coded = CodedInputStream.newInstance(in);
      coded.setSizeLimit(Integer.MAX_VALUE);
      graph = OnnxMl.ModelProto.parseFrom(coded).getGraph();
    } catch (IOException e) {
      throw new OrtException("cannot read " + modelFile + " as an ONNX protobuf: " + e.getMessage());
    }
    Set<String> initialized = new HashSet<>();
    for (OnnxMl.TensorProto t : graph.getInitializerList()) {
      initialized.add(t.getName());
    }
    List<TensorSpec> out = new ArrayList<>();
    for (OnnxMl.ValueInfoProto v : graph.getInputList()) {
      if (!initialized.contains(v.getName())) {
        continue;
      }
      OnnxMl.TypeProto.Tensor t = v.getType().getTensorType();
      List<Long> dims = new ArrayList<>();
      for (OnnxMl.TensorShapeProto.Dimension d : t.getShape().getDimList()) {
        dims.add(d.hasDimValue() ? d.getDimValue() : -1L);
      }
      out.add(new TensorSpec(v.getName(), ElementType.fromOnnxDataType(t.getElemType()), dims));
    }
    return out;
  }

  private static List<TensorSpec> specs(Map<String, NodeInfo> infos) {
    List<TensorSpec> out = new ArrayList<>();
    for (NodeInfo info : infos.values()) {
      if (info.getInfo() instanceof TensorInfo t) {
        long[] shape = t.getShape();
        List<Long> dims = new ArrayList<>(shape.length);
        for (long d : shape) {
          dims.add(d < 0 ? -1L : d);
        }
        out.add(new TensorSpec(info.getName(), ElementType.fromOrt(t.onnxType), dims));
      } else {
        out.add(new TensorSpec(info.getName(), ElementType.OTHER, List.of()));
      }
    }
    return out;
  }
}

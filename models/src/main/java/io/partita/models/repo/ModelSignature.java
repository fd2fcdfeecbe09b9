package io.partita.models.repo;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The inputs a caller must feed and the outputs a model returns, as ONNX Runtime reports them.
 * Graph inputs that have a default initializer (such as LoRA parameters) are not listed: ONNX
 * Runtime hides them from {@code getInputInfo()}, and only an active adapter can override them, so
 * they are not part of what a client sends.
 */
public record ModelSignature(List<TensorSpec> inputs, List<TensorSpec> outputs) {

  public ModelSignature {
    inputs = List.copyOf(inputs);
    outputs = List.copyOf(outputs);
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
      try (OrtSession session = env.createSession(modelFile.toString(), opts)) {
        return of(session);
      }
    }
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

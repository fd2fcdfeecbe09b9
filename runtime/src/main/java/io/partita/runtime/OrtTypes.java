package io.partita.runtime;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * ONNX Runtime's view of tensors in the repository's terms: element types and the inputs and
 * outputs an open session reports. {@code models} reads signatures from the ONNX file itself; this
 * is what ONNX Runtime says about a session, for tensors it returns and for checking the two agree.
 */
public final class OrtTypes {
  private OrtTypes() {}

  /** Maps ONNX Runtime's element type; anything unlisted is {@link ElementType#OTHER}. */
  public static ElementType elementType(TensorInfo.OnnxTensorType t) {
    String name = t.name().replace("ONNX_TENSOR_ELEMENT_DATA_TYPE_", "");
    try {
      return ElementType.valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return ElementType.OTHER;
    }
  }

  /** The inputs a caller feeds and the outputs a run returns, as an open session reports them. */
  public static ModelSignature signature(OrtSession session) throws OrtException {
    return new ModelSignature(specs(session.getInputInfo()), specs(session.getOutputInfo()));
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
        out.add(new TensorSpec(info.getName(), elementType(t.onnxType), dims));
      } else {
        out.add(new TensorSpec(info.getName(), ElementType.OTHER, List.of()));
      }
    }
    return out;
  }
}

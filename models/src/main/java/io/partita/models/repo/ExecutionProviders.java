package io.partita.models.repo;

import java.util.List;

/**
 * The execution provider names a manifest may declare, as ONNX Runtime 1.29's {@code OrtProvider}
 * names them. Kept here so that reading a repository needs no ONNX Runtime; the runtime module's
 * tests check that this list and ONNX Runtime's own stay the same.
 */
public final class ExecutionProviders {

  /** In ONNX Runtime's order. */
  public static final List<String> NAMES = List.of(
      "CPU", "CUDA", "DNNL", "OPEN_VINO", "VITIS_AI", "TENSOR_RT", "NNAPI", "RK_NPU", "DIRECT_ML",
      "MI_GRAPH_X", "ACL", "ROCM", "CORE_ML", "XNNPACK", "AZURE", "QNN", "WEBGPU");

  private ExecutionProviders() {}

  public static boolean isKnown(String name) {
    return NAMES.contains(name);
  }
}

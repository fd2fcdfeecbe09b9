package io.partita.runtime;

/** The execution providers a slot can run on. ONNX Runtime's CPU provider is always there. */
public enum Provider {
  CPU,
  CUDA
}

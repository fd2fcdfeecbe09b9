package io.partita.runtime;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;

/**
 * Mounting LoRA adapters: loading ONNX Runtime's adapter format and activating an adapter for one
 * run. The adapter's named tensors are appended to that run's feeds, overriding the graph inputs of
 * the same names (inputs with default initializers); nothing else can override them from Java.
 *
 * <p>It does not check that an adapter fits a model: ONNX Runtime only notices a wrong name or
 * shape when a run uses it, so callers check with {@code ModelSignature.checkAdapter} first.
 */
public final class LoraAdapters {
  private LoraAdapters() {}

  /** Loads an adapter from its bytes; the caller owns (and closes) it. */
  public static OrtLoraAdapter load(byte[] adapterBytes) throws OrtException {
    return OrtLoraAdapter.create(adapterBytes);
  }

  /**
   * Run options with {@code adapter} active, or plain run options when it is null (the base model).
   * The caller owns (and closes) them; the adapter must stay open until the run ends.
   */
  public static OrtSession.RunOptions runOptions(OrtLoraAdapter adapter) throws OrtException {
    OrtSession.RunOptions options = new OrtSession.RunOptions();
    if (adapter != null) {
      try {
        options.addActiveLoraAdapter(adapter);
      } catch (OrtException | RuntimeException e) {
        options.close();
        throw e;
      }
    }
    return options;
  }
}

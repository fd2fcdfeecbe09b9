package io.partita.worker.serving;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens ONNX Runtime sessions for slots: intra-op threads and their CPU affinities, or the CUDA
 * provider on the slot's device. A CUDA session that does not open falls back to CPU and says why;
 * after the first such failure the provider is not tried again (it costs seconds each time).
 */
public final class SessionFactory {
  private static final Logger log = LoggerFactory.getLogger(SessionFactory.class);

  private volatile String cudaBroken;

  /**
   * An open session and what it really runs on.
   *
   * @param provider CPU or CUDA
   * @param fallback why the CUDA provider that was asked for is not used; null when it is, or was not asked for
   */
  public record Opened(OrtSession session, String provider, String fallback) {}

  public Opened open(OrtEnvironment env, Path modelFile, SessionSpec spec) throws OrtException {
    String fallback = null;
    if (spec.cuda()) {
      String broken = cudaBroken;
      if (broken == null) {
        try (OrtSession.SessionOptions options = options(spec)) {
          options.addCUDA(spec.gpu());
          return new Opened(env.createSession(modelFile.toString(), options), "CUDA", null);
        } catch (OrtException | RuntimeException | UnsatisfiedLinkError e) {
          broken = e.getMessage();
          cudaBroken = broken;
          log.warn("CUDA was asked for but does not load here ({}); running on CPU", broken);
        }
      }
      fallback = "CUDA device " + spec.gpu() + " did not load (" + broken + "); running on CPU";
    }
    try (OrtSession.SessionOptions options = options(spec)) {
      return new Opened(env.createSession(modelFile.toString(), options), "CPU", fallback);
    }
  }

  static OrtSession.SessionOptions options(SessionSpec spec) throws OrtException {
    OrtSession.SessionOptions options = new OrtSession.SessionOptions();
    try {
      options.setIntraOpNumThreads(spec.threads());
      options.setInterOpNumThreads(1);
      options.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
      String affinities = spec.intraOpAffinities();
      if (!affinities.isEmpty()) {
        options.addConfigEntry("session.intra_op_thread_affinities", affinities);
      }
      // LoRA parameters are graph inputs with default initializers by design; ORT warns about each.
      options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
      return options;
    } catch (OrtException | RuntimeException e) {
      options.close();
      throw e;
    }
  }
}

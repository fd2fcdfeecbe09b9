package io.partita.worker.serving;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens ONNX Runtime sessions with the worker's settings: intra-op threads, and the CUDA provider
 * when asked for and it loads. Without CUDA it says once that it runs on CPU and carries on.
 */
public final class SessionFactory {
  private static final Logger log = LoggerFactory.getLogger(SessionFactory.class);

  private final int intraOpThreads;
  private volatile boolean cuda;
  private volatile boolean fallbackLogged;

  /**
   * @param intraOpThreads threads per session; 0 lets ONNX Runtime use all cores
   * @param cuda whether to try the CUDA provider
   */
  public SessionFactory(int intraOpThreads, boolean cuda) {
    this.intraOpThreads = intraOpThreads;
    this.cuda = cuda;
  }

  public String provider() {
    return cuda ? "CUDA" : "CPU";
  }

  public OrtSession open(OrtEnvironment env, Path modelFile) throws OrtException {
    if (cuda) {
      try (OrtSession.SessionOptions options = options()) {
        options.addCUDA(0);
        return env.createSession(modelFile.toString(), options);
      } catch (OrtException | RuntimeException | UnsatisfiedLinkError e) {
        cuda = false;
        if (!fallbackLogged) {
          fallbackLogged = true;
          log.warn("CUDA was asked for but does not load here ({}); running on CPU", e.getMessage());
        }
      }
    } else if (!fallbackLogged) {
      fallbackLogged = true;
      log.info("Running ONNX Runtime on CPU");
    }
    try (OrtSession.SessionOptions options = options()) {
      return env.createSession(modelFile.toString(), options);
    }
  }

  private OrtSession.SessionOptions options() throws OrtException {
    OrtSession.SessionOptions options = new OrtSession.SessionOptions();
    options.setIntraOpNumThreads(intraOpThreads);
    options.setInterOpNumThreads(1);
    // LoRA parameters are graph inputs with default initializers by design; ORT warns about each.
    options.setSessionLogLevel(ai.onnxruntime.OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
    return options;
  }
}

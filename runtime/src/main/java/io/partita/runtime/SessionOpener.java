package io.partita.runtime;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.nio.file.Path;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens ONNX Runtime sessions for slots with the options {@link SessionSettings#of} gives their
 * {@link SlotConfig}: the only way the profiler and the worker open a session.
 *
 * <p>A CUDA session that does not open either fails ({@link CudaFallback#NONE}: the profiler, for
 * which a provider that does not load is a failed measurement) or falls back to the same slot on
 * CPU and says why ({@link CudaFallback#TO_CPU}: the worker). After the first such failure an
 * opener does not try CUDA again, since each try costs seconds (the GPU build extracts its
 * provider library every time).
 */
public final class SessionOpener {
  private static final Logger log = LoggerFactory.getLogger(SessionOpener.class);

  /** What to do when the CUDA provider asked for does not load. */
  public enum CudaFallback {
    /** Throw ONNX Runtime's error. */
    NONE,
    /** Open the slot on CPU instead, and report why in {@link Opened#fallback()}. */
    TO_CPU
  }

  /**
   * An open session and what it really runs on. The caller owns the session.
   *
   * @param requested the slot it was opened for
   * @param provider CPU or CUDA
   * @param settings the options it was opened with
   * @param fallback why the CUDA provider that was asked for is not used; null when it is, or was
   *     not asked for
   */
  public record Opened(OrtSession session, SlotConfig requested, Provider provider, SessionSettings settings,
                       String fallback) {}

  private final OrtEnvironment env;
  private final CudaFallback fallback;
  private volatile String cudaBroken;

  public SessionOpener(OrtEnvironment env, CudaFallback fallback) {
    this.env = Objects.requireNonNull(env, "env");
    this.fallback = Objects.requireNonNull(fallback, "fallback");
  }

  public OrtEnvironment env() {
    return env;
  }

  /** Opens the model file for the slot. */
  public Opened open(Path modelFile, SlotConfig slot) throws OrtException {
    return open(options -> env.createSession(modelFile.toString(), options), slot);
  }

  /** Opens the model bytes (a model built in memory) for the slot. */
  public Opened open(byte[] model, SlotConfig slot) throws OrtException {
    return open(options -> env.createSession(model, options), slot);
  }

  @FunctionalInterface
  private interface Create {
    OrtSession create(OrtSession.SessionOptions options) throws OrtException;
  }

  private Opened open(Create create, SlotConfig slot) throws OrtException {
    String reason = null;
    if (slot.cuda()) {
      SessionSettings settings = SessionSettings.of(slot);
      if (fallback == CudaFallback.NONE) {
        try (OrtSession.SessionOptions options = settings.toOptions()) {
          return new Opened(create.create(options), slot, Provider.CUDA, settings, null);
        }
      }
      String broken = cudaBroken;
      if (broken == null) {
        try (OrtSession.SessionOptions options = settings.toOptions()) {
          return new Opened(create.create(options), slot, Provider.CUDA, settings, null);
        } catch (OrtException | RuntimeException | UnsatisfiedLinkError e) {
          broken = e.getMessage();
          cudaBroken = broken;
          log.warn("CUDA was asked for but does not load here ({}); running on CPU", broken);
        }
      }
      reason = "CUDA device " + slot.gpu() + " did not load (" + broken + "); running on CPU";
    }
    SessionSettings settings = SessionSettings.of(slot.onCpu());
    try (OrtSession.SessionOptions options = settings.toOptions()) {
      return new Opened(create.create(options), slot, Provider.CPU, settings, reason);
    }
  }
}

package io.partita.runtime;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtSession;
import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Every ONNX Runtime session option a slot's session is opened with, as a value: {@link #of}
 * derives it from a {@link SlotConfig} and {@link #toOptions} is the only code that turns it into
 * {@code SessionOptions}. Two slots with equal settings get identical sessions; this is what lets a
 * test compare what the profiler measures with what the worker serves.
 *
 * @param provider where the session runs; CUDA adds the CUDA provider on {@code gpu}
 * @param gpu the CUDA device, -1 for CPU
 * @param intraOpThreads intra-op threads (0 = ONNX Runtime's default)
 * @param interOpThreads inter-op threads; always 1, since execution is sequential
 * @param executionMode always SEQUENTIAL: a slot runs one batch at a time through one graph
 * @param configEntries session configuration entries ({@code session.*} keys), sorted
 */
public record SessionSettings(Provider provider, int gpu, int intraOpThreads, int interOpThreads,
                              OrtSession.SessionOptions.ExecutionMode executionMode,
                              SortedMap<String, String> configEntries) {

  /** Whether idle intra-op threads spin; "1" or "0". */
  public static final String INTRA_OP_SPINNING = "session.intra_op.allow_spinning";
  /** Whether idle inter-op threads spin; always "0" (with one inter-op thread there is no pool). */
  public static final String INTER_OP_SPINNING = "session.inter_op.allow_spinning";
  /** The 1-based processors of the intra-op pool's threads (the caller's own thread excluded). */
  public static final String INTRA_OP_AFFINITIES = "session.intra_op_thread_affinities";

  public SessionSettings {
    configEntries = Collections.unmodifiableSortedMap(new TreeMap<>(configEntries));
  }

  /**
   * The settings of a slot's session.
   *
   * <p>Spinning is set explicitly on every session, measured or served, because ONNX Runtime's
   * default (spin) is only right when every thread has a core of its own; {@link SlotConfig}
   * decides when that is (a pinned CPU partition, unless the host turns spinning off) and the
   * profiler and the worker both read the same field, so a partition is never measured spinning
   * and served sleeping, or the other way round.
   */
  public static SessionSettings of(SlotConfig slot) {
    SortedMap<String, String> entries = new TreeMap<>();
    entries.put(INTRA_OP_SPINNING, slot.spinning() ? "1" : "0");
    entries.put(INTER_OP_SPINNING, "0");
    String affinities = slot.intraOpAffinities();
    if (!affinities.isEmpty()) {
      entries.put(INTRA_OP_AFFINITIES, affinities);
    }
    return new SessionSettings(slot.provider(), slot.gpu(), slot.threads(), 1,
        OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL, entries);
  }

  /**
   * New session options with these settings; the caller owns (and closes) them. Session logging is
   * at ERROR: LoRA parameters are graph inputs with default initializers by design, and ONNX
   * Runtime warns about each one on every load.
   *
   * @throws OrtException when ONNX Runtime refuses a setting, or the CUDA provider does not load
   */
  public OrtSession.SessionOptions toOptions() throws OrtException {
    OrtSession.SessionOptions options = new OrtSession.SessionOptions();
    try {
      options.setIntraOpNumThreads(intraOpThreads);
      options.setInterOpNumThreads(interOpThreads);
      options.setExecutionMode(executionMode);
      for (Map.Entry<String, String> e : configEntries.entrySet()) {
        options.addConfigEntry(e.getKey(), e.getValue());
      }
      options.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
      addProvider(options, provider, gpu);
      return options;
    } catch (OrtException | RuntimeException | UnsatisfiedLinkError e) {
      options.close();
      throw e;
    }
  }

  /**
   * Adds the execution provider to session options: nothing for CPU (ONNX Runtime's default), the
   * CUDA provider on {@code device} for CUDA. The one place a provider is added; the profiler's
   * provider probe uses it too.
   *
   * @throws OrtException when the provider's libraries or device are missing
   */
  public static void addProvider(OrtSession.SessionOptions options, Provider provider, int device)
      throws OrtException {
    if (provider == Provider.CUDA) {
      options.addCUDA(device);
    }
  }
}

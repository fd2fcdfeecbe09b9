package io.partita.profiler.env;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import io.partita.profiler.onnx.TinyModels;
import io.partita.runtime.SessionSettings;
import io.partita.runtime.SlotConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds the execution providers that really work here by opening a session with each on a
 * one-node model. {@code OrtEnvironment.getAvailableProviders()} only lists what the library was
 * compiled with (the GPU build lists CUDA on a machine without a GPU), so it is not consulted.
 *
 * <p>CPU is always tried first and is expected to load; CUDA is tried on device 0 and, when its
 * libraries or device are missing, recorded as a failure with ONNX Runtime's message. Nothing here
 * throws for a provider that does not load.
 */
public final class ProviderProbe {

  /** The providers the probe knows how to try, in order. */
  public enum Provider { CPU, CUDA }

  /** Configures session options for a provider; a seam so tests can simulate providers failing. */
  @FunctionalInterface
  public interface ProviderSetup {
    void apply(Provider provider, OrtSession.SessionOptions options) throws OrtException;
  }

  /** Adds the real provider as every session gets it (the runtime module): nothing for CPU, CUDA on device 0. */
  public static final ProviderSetup REAL = (provider, options) ->
      SessionSettings.addProvider(options, io.partita.runtime.Provider.valueOf(provider.name()), 0);

  private ProviderProbe() {}

  /** Probes the real providers on this host. */
  public static OrtInfo probe(OrtEnvironment env) {
    return probe(env, REAL, TinyModels.identity());
  }

  /** Probes with the given provider setup on the given model bytes. */
  public static OrtInfo probe(OrtEnvironment env, ProviderSetup setup, byte[] model) {
    List<String> loaded = new ArrayList<>();
    Map<String, String> failures = new LinkedHashMap<>();
    for (Provider provider : Provider.values()) {
      // One unpinned thread, the runtime module's options; the provider is what is being probed.
      try (OrtSession.SessionOptions options = SessionSettings.of(SlotConfig.unpinned(1)).toOptions()) {
        setup.apply(provider, options);
        try (OrtSession ignored = env.createSession(model, options)) {
          loaded.add(provider.name());
        }
      } catch (OrtException | RuntimeException | UnsatisfiedLinkError e) {
        failures.put(provider.name(), describe(e));
      }
    }
    return new OrtInfo(env.getVersion(), loaded, failures);
  }

  static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message.strip());
  }
}

package io.partita.profiler.env;

import java.util.List;
import java.util.Map;

/**
 * ONNX Runtime as this process sees it.
 *
 * @param version the native library's version
 * @param providers execution providers that actually loaded a session (e.g. CPU, CUDA)
 * @param failures provider name to the error that stopped it loading
 */
public record OrtInfo(String version, List<String> providers, Map<String, String> failures) {
  public OrtInfo {
    providers = List.copyOf(providers);
    failures = Map.copyOf(failures);
  }
}

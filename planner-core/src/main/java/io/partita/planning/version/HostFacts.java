package io.partita.planning.version;

import java.util.Set;

/**
 * The facts about a host that version choice needs, taken from the host environment it publishes
 * (the Avro {@code io.partita.avro.HostEnvironment}, which the profiler builds from its
 * {@code ProbedHost}).
 *
 * @param providers execution providers that actually load there ({@code CPU}, {@code CUDA})
 * @param cpuFlags CPU feature flags ({@code avx2}, {@code avx512f}, ...)
 * @param memoryBytes memory available to one model instance
 * @param baselineScore the short benchmark's score, higher = faster; {@code > 0}
 */
public record HostFacts(
    String hostId, Set<String> providers, Set<String> cpuFlags, long memoryBytes, double baselineScore) {
  public HostFacts {
    if (hostId == null || hostId.isBlank()) {
      throw new IllegalArgumentException("hostId: must not be blank");
    }
    if (!(baselineScore > 0) || Double.isInfinite(baselineScore)) {
      throw new IllegalArgumentException("baselineScore: must be a finite number > 0");
    }
    providers = Set.copyOf(providers);
    cpuFlags = Set.copyOf(cpuFlags);
  }
}

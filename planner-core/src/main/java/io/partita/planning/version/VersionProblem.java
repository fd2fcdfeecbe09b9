package io.partita.planning.version;

import java.util.List;

/**
 * The input of {@link VersionSelector}: the host to choose for, the other hosts that measured
 * versions (test environments), the candidates, all timing observations and the requirements.
 */
public record VersionProblem(
    HostFacts host,
    List<HostFacts> otherHosts,
    List<ModelVersion> candidates,
    List<TimingObservation> timings,
    VersionRequirements requirements) {
  public VersionProblem {
    otherHosts = List.copyOf(otherHosts);
    candidates = List.copyOf(candidates);
    timings = List.copyOf(timings);
  }
}

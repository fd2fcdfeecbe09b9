package io.partita.planning.version;

/** A measured latency of one version on one host (from a timing event). */
public record TimingObservation(String versionId, String hostId, double latencyMs) {
  public TimingObservation {
    if (!(latencyMs > 0) || Double.isInfinite(latencyMs)) {
      throw new IllegalArgumentException("latencyMs: must be a finite number > 0");
    }
  }
}

package io.partita.planning.version;

/**
 * What happened to one candidate version.
 *
 * @param status chosen, runner-up or excluded
 * @param latencyMs the figure used (measured or predicted); {@code null} when none could be had
 * @param predicted whether {@code latencyMs} was predicted from another host
 * @param sourceHost the host whose measurement it comes from (this host when measured here)
 * @param reason why it was excluded, or why it ranks where it does
 */
public record VersionOutcome(
    String versionId,
    Status status,
    Double latencyMs,
    boolean predicted,
    String sourceHost,
    Double accuracy,
    String reason) {

  public enum Status {
    CHOSEN,
    RUNNER_UP,
    EXCLUDED
  }
}

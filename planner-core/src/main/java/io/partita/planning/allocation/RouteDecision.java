package io.partita.planning.allocation;

import java.util.List;

/**
 * Where one request goes, or why it cannot go anywhere.
 *
 * @param chosenInstanceId {@code null} when {@code error} is set
 * @param outstanding the chosen instance's {@code inFlight + lag}
 * @param runnersUp the other ready instances, best first
 * @param notReady the instances of the service model that are not ready
 * @param error {@code null}, or why no instance can take the request
 */
public record RouteDecision(
    String serviceModelId,
    String chosenInstanceId,
    long outstanding,
    List<InstanceStatus> runnersUp,
    List<String> notReady,
    String error) {
  public RouteDecision {
    runnersUp = List.copyOf(runnersUp);
    notReady = List.copyOf(notReady);
  }
}

package io.partita.planning.allocation;

/**
 * What the router knows of one instance.
 *
 * @param inFlight requests sent and not answered
 * @param lag the consumer lag of its request topic
 */
public record InstanceStatus(String instanceId, String serviceModelId, boolean ready, long inFlight, long lag) {
  /** {@code inFlight + lag}: the requests this instance still has to answer. */
  public long outstanding() {
    return inFlight + lag;
  }
}

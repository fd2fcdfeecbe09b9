package io.partita.planning.allocation;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Picks the instance that serves one request for a service model (docs/concepts.md, method 3).
 *
 * <p><b>Rule.</b> Among the ready instances of the service model, the one with the fewest
 * outstanding requests {@code inFlight + lag}; ties to fewer in flight (those are already being
 * worked on, lag is not), then to the smaller instance id.
 *
 * <p><b>Guarantees.</b> Never picks an instance that is not ready or belongs to another service
 * model; an unknown service model or one without a ready instance is an explicit error, never an
 * exception.
 */
public final class InstanceRouter {

  private static final Comparator<InstanceStatus> ORDER = Comparator.comparingLong(InstanceStatus::outstanding)
      .thenComparingLong(InstanceStatus::inFlight).thenComparing(InstanceStatus::instanceId);

  private InstanceRouter() {}

  public static RouteDecision route(String serviceModelId, List<InstanceStatus> instances) {
    List<InstanceStatus> ready = new ArrayList<>();
    List<String> notReady = new ArrayList<>();
    for (InstanceStatus s : instances) {
      if (!s.serviceModelId().equals(serviceModelId)) {
        continue;
      }
      if (s.ready()) {
        ready.add(s);
      } else {
        notReady.add(s.instanceId());
      }
    }
    notReady.sort(Comparator.naturalOrder());
    if (ready.isEmpty()) {
      String error = notReady.isEmpty() ? "unknown service model " + serviceModelId + ": it has no instance"
          : "service model " + serviceModelId + " has no ready instance (" + notReady.size() + " not ready)";
      return new RouteDecision(serviceModelId, null, 0, List.of(), notReady, error);
    }
    ready.sort(ORDER);
    InstanceStatus chosen = ready.get(0);
    return new RouteDecision(serviceModelId, chosen.instanceId(), chosen.outstanding(),
        ready.subList(1, ready.size()), notReady, null);
  }
}

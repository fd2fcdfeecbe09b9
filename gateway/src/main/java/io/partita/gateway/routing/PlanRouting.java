package io.partita.gateway.routing;

import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Routing by the planner's routes ({@code gateway.routing=plan}). For a service model:
 * <ul>
 *   <li>no {@link Route} yet: refused, "no route for model 'X' yet (is the planner running?)";</li>
 *   <li>a route with no ready instance: refused, naming each instance and why it is not ready;</li>
 *   <li>else the ready instance with the least {@code inFlight + queueDepth} (ties: the smaller
 *       instance id), and one of its {@code partitions}, round-robin per instance; an instance that
 *       lists no partitions gets the request without a partition (Kafka's partitioner chooses).</li>
 * </ul>
 * The load figures are the worker's last slot status as the planner last wrote it, so between two
 * route updates every request goes to the same instance.
 */
public final class PlanRouting implements Routing {
  private static final Comparator<RouteInstance> LEAST_LOADED = Comparator
      .comparingLong((RouteInstance i) -> (long) Math.max(0, i.getInFlight()) + Math.max(0, i.getQueueDepth()))
      .thenComparing(RouteInstance::getInstanceId);

  private final Function<String, Route> routes;
  private final BooleanSupplier caughtUp;
  private final Map<String, AtomicLong> turns = new ConcurrentHashMap<>();

  /**
   * @param routes the current route of a service model, or null when there is none
   * @param caughtUp whether the route table has been read up to its end once
   */
  public PlanRouting(Function<String, Route> routes, BooleanSupplier caughtUp) {
    this.routes = routes;
    this.caughtUp = caughtUp;
  }

  @Override
  public Target choose(String serviceModel) {
    Route route = routes.apply(serviceModel);
    if (route == null) {
      throw new NotRoutableException("no route for model '" + serviceModel + "' yet (is the planner running?)");
    }
    RouteInstance best = null;
    for (RouteInstance instance : route.getInstances()) {
      if (instance.getReady() && (best == null || LEAST_LOADED.compare(instance, best) < 0)) {
        best = instance;
      }
    }
    if (best == null) {
      throw new NotRoutableException(notReadyMessage(serviceModel, route));
    }
    List<Integer> partitions = best.getPartitions();
    if (partitions.isEmpty()) {
      return new Target(best.getInstanceId(), null);
    }
    long turn = turns.computeIfAbsent(serviceModel + "\u0000" + best.getInstanceId(), k -> new AtomicLong())
        .getAndIncrement();
    return new Target(best.getInstanceId(), partitions.get((int) Math.floorMod(turn, (long) partitions.size())));
  }

  static String notReadyMessage(String serviceModel, Route route) {
    if (route.getInstances().isEmpty()) {
      return "model '" + serviceModel + "' has no ready instance: the plan places no instance of it yet"
          + " (has a host profiled its base model?)";
    }
    List<String> reasons = new ArrayList<>();
    for (RouteInstance instance : route.getInstances()) {
      reasons.add(instance.getInstanceId() + " on " + instance.getHost() + "/" + instance.getSlot() + ": "
          + (instance.getReason() == null ? "not ready" : instance.getReason()));
    }
    return "model '" + serviceModel + "' has no ready instance: " + String.join("; ", reasons);
  }

  @Override
  public boolean ready(String serviceModel) {
    Route route = routes.apply(serviceModel);
    return route != null && route.getInstances().stream().anyMatch(RouteInstance::getReady);
  }

  @Override
  public boolean ready() {
    return caughtUp.getAsBoolean();
  }

  @Override
  public Mode mode() {
    return Mode.PLAN;
  }
}

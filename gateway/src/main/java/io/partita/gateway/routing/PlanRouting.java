package io.partita.gateway.routing;

import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

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
 *
 * <p>Affinity, then fallback: a service model's own route lists the instances the plan allocated
 * to it, on slots that hold its weight file mounted, so those come first. When none of them is
 * ready (or there is no route for it yet) and a fallback is configured, the request goes to the
 * least loaded ready instance of any service model on the same request topic, that is of the same
 * base model: every slot serves every service model of its base model, mounting the weight file on
 * demand (docs/internals/worker.md), so the request is answered there, after one mount.
 */
public final class PlanRouting implements Routing {
  private static final Comparator<RouteInstance> LEAST_LOADED = Comparator
      .comparingLong((RouteInstance i) -> (long) Math.max(0, i.getInFlight()) + Math.max(0, i.getQueueDepth()))
      .thenComparing(RouteInstance::getInstanceId);

  private final Function<String, Route> routes;
  private final Supplier<Collection<Route>> allRoutes;
  private final Function<String, String> requestTopicOf;
  private final BooleanSupplier caughtUp;
  private final Map<String, AtomicLong> turns = new ConcurrentHashMap<>();

  /**
   * @param routes the current route of a service model, or null when there is none
   * @param caughtUp whether the route table has been read up to its end once
   */
  public PlanRouting(Function<String, Route> routes, BooleanSupplier caughtUp) {
    this(routes, null, null, caughtUp);
  }

  /**
   * Routing with a fallback to the instances of the same base model.
   *
   * @param allRoutes every current route
   * @param requestTopicOf the request topic of a service model (that of its base model)
   */
  public PlanRouting(Function<String, Route> routes, Supplier<Collection<Route>> allRoutes,
      Function<String, String> requestTopicOf, BooleanSupplier caughtUp) {
    this.routes = routes;
    this.allRoutes = allRoutes;
    this.requestTopicOf = requestTopicOf;
    this.caughtUp = caughtUp;
  }

  @Override
  public Target choose(String serviceModel) {
    Route route = routes.apply(serviceModel);
    RouteInstance best = route == null ? null : leastLoaded(route.getInstances());
    if (best == null) {
      best = fallback(serviceModel, route);
    }
    if (best == null) {
      throw new NotRoutableException(route == null
          ? "no route for model '" + serviceModel + "' yet (is the planner running?)" : notReadyMessage(serviceModel, route));
    }
    List<Integer> partitions = best.getPartitions();
    if (partitions.isEmpty()) {
      return new Target(best.getInstanceId(), null);
    }
    long turn = turns.computeIfAbsent(serviceModel + "\u0000" + best.getInstanceId(), k -> new AtomicLong())
        .getAndIncrement();
    return new Target(best.getInstanceId(), partitions.get((int) Math.floorMod(turn, (long) partitions.size())));
  }

  private static RouteInstance leastLoaded(Collection<RouteInstance> instances) {
    RouteInstance best = null;
    for (RouteInstance instance : instances) {
      if (instance.getReady() && (best == null || LEAST_LOADED.compare(instance, best) < 0)) {
        best = instance;
      }
    }
    return best;
  }

  /** The least loaded ready instance of the service model's base model, or null (no fallback, or none ready). */
  private RouteInstance fallback(String serviceModel, Route route) {
    if (allRoutes == null) {
      return null;
    }
    String topic = route != null ? route.getRequestTopic() : requestTopicOf.apply(serviceModel);
    if (topic == null) {
      return null;
    }
    List<RouteInstance> sameBase = new ArrayList<>();
    for (Route other : allRoutes.get()) {
      if (topic.equals(other.getRequestTopic())) {
        sameBase.addAll(other.getInstances());
      }
    }
    return leastLoaded(sameBase);
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
    return route != null && route.getInstances().stream().anyMatch(RouteInstance::getReady) || fallback(serviceModel, route) != null;
  }

  @Override
  public boolean ready() {
    return caughtUp.getAsBoolean();
  }

  @Override
  public boolean settling(String serviceModel) {
    Route route = routes.apply(serviceModel);
    return route != null && !route.getInstances().isEmpty();
  }

  @Override
  public Mode mode() {
    return Mode.PLAN;
  }
}

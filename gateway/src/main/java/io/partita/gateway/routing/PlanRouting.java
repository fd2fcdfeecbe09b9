package io.partita.gateway.routing;

import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Routing by the planner's routes ({@code gateway.routing=plan}). For a service model:
 * <ul>
 *   <li>no {@link Route} yet: refused, "no route for model 'X' yet (is the planner running?)";</li>
 *   <li>a route with no ready instance, and no ready instance of the same base model: refused,
 *       naming each instance and why it is not ready;</li>
 *   <li>else the request goes to its base model's request topic without a partition: Kafka's
 *       partitioner spreads requests evenly over the partitions (by the request id), and the
 *       workers own those partitions in proportion to their slots' planned capacity (the workers'
 *       capacity assignor), so each host gets its capacity share, as requests produced by any
 *       Kafka client do;</li>
 *   <li>but a request pinned to a version goes to a partition owned by a worker whose ready
 *       instance runs that version (the instances' {@code version} and {@code partitions}), drawn
 *       evenly over those partitions, so over the hosts running it by their capacity: hosts of one
 *       base model may run different versions (the planner chooses per host), and a worker asked
 *       for a version it does not run can only answer NOT_READY. When the route names no such
 *       partition (no instance runs the version, or a planner older than the field) the request
 *       goes as one that is not pinned.</li>
 * </ul>
 * Why not the least loaded instance, as the gateway did before: its load figures are the workers'
 * last slot status as the planner last wrote it, so between two route updates every request went
 * to the same instance, and a host got half the requests of a base model whatever its speed.
 *
 * <p>Any slot of a base model serves every service model of it, mounting the weight file on demand
 * (docs/internals/worker.md), so a service model is routable when any instance on its base model's request
 * topic is ready, its own first: the {@link Target} names that instance.
 */
public final class PlanRouting implements Routing {
  private final Function<String, Route> routes;
  private final Supplier<Collection<Route>> allRoutes;
  private final Function<String, String> requestTopicOf;
  private final BooleanSupplier caughtUp;

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
  public Target choose(String serviceModel, String version) {
    Route route = routes.apply(serviceModel);
    RouteInstance ready = route == null ? null : firstReady(route.getInstances());
    if (ready == null) {
      ready = fallback(serviceModel, route);
    }
    if (ready == null) {
      throw new NotRoutableException(route == null
          ? "no route for model '" + serviceModel + "' yet (is the planner running?)" : notReadyMessage(serviceModel, route));
    }
    if (version != null) {
      Target pinned = runningVersion(serviceModel, route, version);
      if (pinned != null) {
        return pinned;
      }
    }
    return new Target(ready.getInstanceId(), null);
  }

  /**
   * A partition owned by a worker with a ready instance of the version (the service model's own
   * instances first, else those of its base model), drawn evenly over all such partitions; null
   * when the routes name none.
   */
  private Target runningVersion(String serviceModel, Route route, String version) {
    List<RouteInstance> running = route == null ? List.of() : route.getInstances();
    if (running.stream().noneMatch(i -> runs(i, version))) {
      running = sameBase(serviceModel, route);
    }
    List<Target> choices = new ArrayList<>();
    BitSet taken = new BitSet();
    for (RouteInstance i : running) {
      if (runs(i, version)) {
        for (int p : i.getPartitions()) {
          if (p >= 0 && !taken.get(p)) {
            taken.set(p);
            choices.add(new Target(i.getInstanceId(), p));
          }
        }
      }
    }
    return choices.isEmpty() ? null : choices.get(ThreadLocalRandom.current().nextInt(choices.size()));
  }

  private static boolean runs(RouteInstance instance, String version) {
    return instance.getReady() && version.equals(instance.getVersion()) && !instance.getPartitions().isEmpty();
  }

  /** The ready instance with the smallest id, or null. */
  private static RouteInstance firstReady(Collection<RouteInstance> instances) {
    RouteInstance first = null;
    for (RouteInstance instance : instances) {
      if (instance.getReady() && (first == null || instance.getInstanceId().compareTo(first.getInstanceId()) < 0)) {
        first = instance;
      }
    }
    return first;
  }

  /** A ready instance of the service model's base model, or null (no fallback, or none ready). */
  private RouteInstance fallback(String serviceModel, Route route) {
    return firstReady(sameBase(serviceModel, route));
  }

  /** Every instance of every route on the service model's request topic (its base model's); empty without a fallback. */
  private List<RouteInstance> sameBase(String serviceModel, Route route) {
    if (allRoutes == null) {
      return List.of();
    }
    String topic = route != null ? route.getRequestTopic() : requestTopicOf.apply(serviceModel);
    if (topic == null) {
      return List.of();
    }
    List<RouteInstance> sameBase = new ArrayList<>();
    for (Route other : allRoutes.get()) {
      if (topic.equals(other.getRequestTopic())) {
        sameBase.addAll(other.getInstances());
      }
    }
    return sameBase;
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

package io.partita.planner.plan;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.MountStatus;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TopicPartitions;
import io.partita.planning.Rendezvous;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Routes for the plan table {@code <p>.plan.routes} (key service model): every slot of the service
 * model's base model, and whether the worker reports it ready, with make before break. Pure.
 *
 * <p>Every slot of a base model serves every one of its service models (a slot that does not hold
 * the weight file mounts it on the first request: the worker's on-demand mounts), so a route lists
 * the planned instances, which keep the weight file mounted, and then one entry for each other slot
 * of the base model, under the instance id the worker gives such a mount ({@code host/slot/service
 * model}). A service model is ready when any of them is.
 *
 * <p>The on-demand entries are bounded ({@link PlanSettings#routeOnDemandLimit}, {@code
 * planner.routes.on-demand.max}): a base model with more slots than that lists, for each service
 * model, the slots that rank highest for it by rendezvous hashing of the service model's name with
 * the slot's key. With every slot listed, a fleet of a thousand hosts wrote every service model's
 * route, each as long as the base model has slots, whenever one host joined or left (5.7 s of a 6.5 s
 * planning pass). Rendezvous ranking keeps a route stable under churn: a slot that leaves changes only
 * the routes that listed it, and one that joins only those it outranks a listed slot in; and it spreads
 * the service models of one base model over different slots. A base model with no more slots than the
 * limit lists them all, as without the bound.
 */
public final class RoutePlans {

  /** Host, then slot: the order of a route's on-demand entries. */
  private static final Comparator<SlotAssignment> BY_SLOT =
      Comparator.comparing((SlotAssignment a) -> a.getHost()).thenComparing(SlotAssignment::getSlot);

  private RoutePlans() {}

  /**
   * One route per catalog service model: its planned instances, each ready when the worker reports
   * its slot running the assigned model version, healthy, with that instance READY (or EVICTED:
   * mounted again on its next request), then the other slots of its base model ({@link #onDemand}).
   * Key service model.
   *
   * <p>Make before break: an instance whose assigned slot does not report it ready yet (a re-plan
   * moved it, and the worker has not applied the change) is still ready while another healthy slot
   * of the same host running the same model reports that instance id READY or EVICTED: the worker
   * there serves it from the old slot until it has opened the new one, and the gateway reaches that
   * worker through the partitions and load of the reporting slot.
   */
  public static SortedMap<String, Route> routes(PlanInputs in, PlanSettings settings,
      Collection<SlotAssignment> assignments) {
    Map<String, List<SlotAssignment>> holding = new TreeMap<>();
    Map<String, List<SlotAssignment>> ofModel = new TreeMap<>();
    for (SlotAssignment a : assignments) {
      ofModel.computeIfAbsent(a.getModel(), k -> new ArrayList<>()).add(a);
      for (AssignedServiceModel asm : a.getServiceModels()) {
        List<SlotAssignment> list = holding.computeIfAbsent(asm.getServiceModel(), k -> new ArrayList<>());
        if (list.isEmpty() || list.get(list.size() - 1) != a) {
          list.add(a);
        }
      }
    }
    SortedMap<String, Route> out = new TreeMap<>();
    for (ServiceModel sm : in.serviceModels().values()) {
      out.put(sm.getName(), route(in, settings, sm, holding.getOrDefault(sm.getName(), List.of()),
          ofModel.getOrDefault(sm.getBaseModel(), List.of())));
    }
    return out;
  }

  /**
   * The route of one service model, from the assignments that hold its instances ({@code holding};
   * others are ignored), the assignments of its base model ({@code baseSlots}: every slot running
   * it; others are ignored) and the slot status of their hosts: what {@link #routes} gives for it.
   */
  public static Route route(PlanInputs in, PlanSettings settings, ServiceModel sm, Collection<SlotAssignment> holding,
      Collection<SlotAssignment> baseSlots) {
    List<SlotAssignment> ordered = new ArrayList<>(holding);
    ordered.sort(BY_SLOT);
    List<RouteInstance> list = new ArrayList<>();
    for (SlotAssignment a : ordered) {
      SlotStatus assigned = in.slots().get(Keys.hostSlot(a.getHost(), a.getSlot()));
      for (AssignedServiceModel asm : a.getServiceModels()) {
        if (!asm.getServiceModel().equals(sm.getName())) {
          continue;
        }
        String reason = notReady(a, asm, assigned);
        SlotStatus status = assigned;
        if (reason != null) {
          SlotStatus elsewhere = servingElsewhere(statusesOf(in, a.getHost()), a, asm.getInstanceId());
          if (elsewhere != null) {
            reason = null;
            status = elsewhere;
          }
        }
        list.add(RouteInstance.newBuilder()
            .setInstanceId(asm.getInstanceId()).setHost(a.getHost()).setSlot(a.getSlot())
            .setReady(reason == null).setReason(reason)
            .setPartitions(requestPartitions(status, settings.topics().requests(a.getModel()))) // one topic per base model
            .setInFlight(status == null ? 0 : Math.max(0, status.getInFlight()))
            .setQueueDepth(status == null ? 0 : Math.max(0, status.getQueueDepth())).setVersion(a.getVersion()).build());
      }
    }
    list.sort(Comparator.comparing(RouteInstance::getInstanceId));
    list.addAll(onDemand(in, settings, baseSlots, sm));
    int ready = (int) list.stream().filter(RouteInstance::getReady).count();
    return Route.newBuilder().setServiceModel(sm.getName())
        .setRequestTopic(settings.topics().requests(sm.getBaseModel())).setReadyInstances(ready)
        .setInstances(list).build();
  }

  /** The slot statuses of one host (keys host/slot), in key order. */
  private static Collection<SlotStatus> statusesOf(PlanInputs in, String host) {
    String prefix = host + Keys.SEP;
    return in.slots().subMap(prefix, prefix + Character.MAX_VALUE).values();
  }

  /**
   * One entry for each planned slot of the service model's base model that holds no planned
   * instance of it, in host/slot order: ready when the slot runs the assigned model version and is
   * healthy, unless its worker reports the service model's on-demand mount there NOT_READY.
   */
  private static List<RouteInstance> onDemand(PlanInputs in, PlanSettings settings, Collection<SlotAssignment> baseSlots,
      ServiceModel sm) {
    List<SlotAssignment> ordered = new ArrayList<>();
    for (SlotAssignment a : baseSlots) {
      if (a.getModel().equals(sm.getBaseModel())
          && a.getServiceModels().stream().noneMatch(asm -> asm.getServiceModel().equals(sm.getName()))) {
        ordered.add(a);
      }
    }
    ordered = highestRanked(ordered, sm.getName(), settings.routeOnDemandLimit());
    ordered.sort(BY_SLOT);
    List<RouteInstance> out = new ArrayList<>();
    for (SlotAssignment a : ordered) {
      SlotStatus status = in.slots().get(Keys.hostSlot(a.getHost(), a.getSlot()));
      String reason = slotNotReady(a, status);
      if (reason == null) {
        for (MountStatus m : status.getServiceModels()) {
          if (m.getServiceModel().equals(sm.getName()) && m.getState().equals("NOT_READY")) {
            reason = sm.getName() + " is NOT_READY there" + (m.getReason() == null ? "" : ": " + m.getReason());
          }
        }
      }
      out.add(RouteInstance.newBuilder()
          .setInstanceId(onDemandInstanceId(a.getHost(), a.getSlot(), sm.getName())).setHost(a.getHost()).setSlot(a.getSlot())
          .setReady(reason == null).setReason(reason)
          .setPartitions(requestPartitions(status, settings.topics().requests(a.getModel())))
          .setInFlight(status == null ? 0 : Math.max(0, status.getInFlight()))
          .setQueueDepth(status == null ? 0 : Math.max(0, status.getQueueDepth())).setVersion(a.getVersion()).build());
    }
    return out;
  }

  /**
   * The {@code limit} slots that rank highest for {@code serviceModel} ({@link Rendezvous#rank}; ties by host,
   * then slot), or all of them when there are no more than {@code limit}. The choice depends on the
   * set of slots only, not on their order. {@code O(n log limit)} for {@code n} slots.
   */
  static List<SlotAssignment> highestRanked(List<SlotAssignment> slots, String serviceModel, int limit) {
    if (slots.size() <= limit) {
      return new ArrayList<>(slots);
    }
    if (limit == 0) {
      return new ArrayList<>();
    }
    record Ranked(long rank, SlotAssignment slot) {}
    Comparator<Ranked> higherFirst = Comparator.comparingLong(Ranked::rank).reversed()
        .thenComparing(Ranked::slot, BY_SLOT);
    // the limit best so far, the worst of them at the head
    PriorityQueue<Ranked> best = new PriorityQueue<>(limit + 1, higherFirst.reversed());
    for (SlotAssignment a : slots) {
      best.add(new Ranked(Rendezvous.rank(serviceModel, a.getHost(), a.getSlot()), a));
      if (best.size() > limit) {
        best.poll();
      }
    }
    List<SlotAssignment> out = new ArrayList<>(limit);
    best.forEach(r -> out.add(r.slot()));
    return out;
  }

  /**
   * {@link #highestRanked} on slot keys ({@code host/slot}): the same choice, made before any slot is
   * decoded, so that a pass routing many service models decodes only the slots their routes list.
   * Best first ({@link SlotRanking#highest}).
   */
  public static List<String> highestRankedKeys(List<String> slotKeys, String serviceModel, int limit) {
    return new SlotRanking(slotKeys).highest(serviceModel, Set.of(), limit);
  }

  /** The instance id a worker gives a service model it mounts on demand on a slot the plan gave no instance of it. */
  public static String onDemandInstanceId(String host, String slot, String serviceModel) {
    return Keys.hostSlot(host, slot) + Keys.SEP + serviceModel;
  }

  /**
   * The partitions of {@code topic} the slot's worker reports owning, ascending and without
   * duplicates (several entries for one topic are merged); empty without a status.
   */
  static List<Integer> requestPartitions(SlotStatus status, String topic) {
    if (status == null) {
      return List.of();
    }
    SortedSet<Integer> partitions = new TreeSet<>();
    for (TopicPartitions tp : status.getRequestPartitions()) {
      if (tp.getTopic().equals(topic)) {
        for (Integer p : tp.getPartitions()) {
          if (p != null && p >= 0) {
            partitions.add(p);
          }
        }
      }
    }
    return new ArrayList<>(partitions);
  }

  /** A healthy slot of the assignment's host, running its model, that reports the instance ready; null if none. */
  private static SlotStatus servingElsewhere(Collection<SlotStatus> statuses, SlotAssignment a, String instanceId) {
    for (SlotStatus s : statuses) {
      if (!s.getHost().equals(a.getHost()) || !s.getModel().equals(a.getModel())
          || !(s.getHealth().equals("READY") || s.getHealth().equals("DEGRADED"))) {
        continue;
      }
      for (MountStatus m : s.getServiceModels()) {
        if (m.getInstanceId().equals(instanceId) && (m.getState().equals("READY") || m.getState().equals("EVICTED"))) {
          return s;
        }
      }
    }
    return null;
  }

  /** Why the assigned slot does not serve its assignment now (no status, another model version, not healthy), or null. */
  private static String slotNotReady(SlotAssignment a, SlotStatus status) {
    String where = a.getHost() + Keys.SEP + a.getSlot();
    if (status == null) {
      return "no status from " + where + " yet";
    }
    if (!status.getModel().equals(a.getModel()) || !status.getVersion().equals(a.getVersion())) {
      return where + " runs " + status.getModel() + "/" + status.getVersion() + ", the plan assigns "
          + a.getModel() + "/" + a.getVersion();
    }
    if (!status.getHealth().equals("READY") && !status.getHealth().equals("DEGRADED")) {
      return where + " is " + status.getHealth();
    }
    return null;
  }

  private static String notReady(SlotAssignment a, AssignedServiceModel asm, SlotStatus status) {
    String where = a.getHost() + Keys.SEP + a.getSlot();
    String slot = slotNotReady(a, status);
    if (slot != null) {
      return slot;
    }
    for (MountStatus m : status.getServiceModels()) {
      if (m.getInstanceId().equals(asm.getInstanceId())) {
        if (m.getState().equals("READY") || m.getState().equals("EVICTED")) {
          return null;
        }
        return "instance " + asm.getInstanceId() + " is " + m.getState()
            + (m.getReason() == null ? "" : ": " + m.getReason());
      }
    }
    return where + " does not report instance " + asm.getInstanceId() + " yet";
  }
}

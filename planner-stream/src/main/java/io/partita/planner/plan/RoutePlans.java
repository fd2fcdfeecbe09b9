package io.partita.planner.plan;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.MountStatus;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TopicPartitions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
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
            .setQueueDepth(status == null ? 0 : Math.max(0, status.getQueueDepth())).build());
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
    List<SlotAssignment> ordered = new ArrayList<>(baseSlots);
    ordered.sort(BY_SLOT);
    List<RouteInstance> out = new ArrayList<>();
    for (SlotAssignment a : ordered) {
      if (!a.getModel().equals(sm.getBaseModel())
          || a.getServiceModels().stream().anyMatch(asm -> asm.getServiceModel().equals(sm.getName()))) {
        continue;
      }
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
          .setQueueDepth(status == null ? 0 : Math.max(0, status.getQueueDepth())).build());
    }
    return out;
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

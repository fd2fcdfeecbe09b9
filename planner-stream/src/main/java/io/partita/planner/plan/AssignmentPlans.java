package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.CPU;
import static io.partita.planner.plan.Plans.GPU;
import static io.partita.planner.plan.Plans.poolIds;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.AssignedWeightFile;
import io.partita.avro.HostEnvironment;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.planning.Hysteresis;
import io.partita.planning.allocation.AllocationPlan;
import io.partita.planning.allocation.InstanceAllocator;
import io.partita.planning.allocation.InstancePlacement;
import io.partita.planning.allocation.ServiceModelSpec;
import io.partita.planning.allocation.SlotState;
import io.partita.planning.allocation.WeightFile;
import io.partita.planning.grouping.CoreLayout;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Slots and instances for the plan table {@code <p>.plan.assignments} (key host/slot): one slot
 * per planned partition, laid out on the pool's resources by {@link io.partita.planning.grouping.CoreLayout},
 * with the catalog's service model instances placed by {@link io.partita.planning.allocation.InstanceAllocator}.
 * Pure.
 */
public final class AssignmentPlans {

  private AssignmentPlans() {}

  /**
   * One slot per planned partition, {@code <pool>-<n>} numbered per host and pool in the order of
   * the partition plans' keys and their sizes (descending); CPU partitions take consecutive CPU ids
   * of the pool, GPU partitions consecutive GPU indices (the slot records the first, the
   * assignment record has one GPU field). Instances of the catalog's service models are placed on
   * these slots by {@link io.partita.planning.allocation.InstanceAllocator}; key host/slot.
   *
   * <p>The same as {@link #slots} of each host with the {@link #instances} of each base model: a
   * slot's layout depends on its host's partitions only, and an instance goes only to a slot of
   * its base model, so the allocator's problem splits by base model exactly (the planner re-plans
   * those parts one by one; {@code AssignmentPlansTest} checks they add up to this).
   */
  public static SortedMap<String, SlotAssignment> assignments(PlanInputs in, PlanSettings settings,
      Collection<PartitionPlan> partitions) {
    return assignments(in, settings, partitions, Map.of());
  }

  /** As above, keeping running layouts within the hysteresis margin ({@link #slots(PlanInputs, PlanSettings, Collection, Map)}). */
  public static SortedMap<String, SlotAssignment> assignments(PlanInputs in, PlanSettings settings,
      Collection<PartitionPlan> partitions, Map<String, SlotAssignment> running) {
    SortedMap<String, SlotAssignment> slots = slots(in, settings, partitions, running);
    Map<String, List<SlotAssignment>> byModel = new TreeMap<>();
    slots.values().forEach(a -> byModel.computeIfAbsent(a.getModel(), m -> new ArrayList<>()).add(a));
    Map<String, List<AssignedServiceModel>> bySlot = new TreeMap<>();
    byModel.forEach((model, list) -> bySlot.putAll(instances(in, model, list)));
    SortedMap<String, SlotAssignment> out = new TreeMap<>();
    slots.forEach((key, a) -> out.put(key, withInstances(a, bySlot.getOrDefault(key, List.of()))));
    return out;
  }

  /** The slot with these instances. */
  public static SlotAssignment withInstances(SlotAssignment slot, List<AssignedServiceModel> instances) {
    return SlotAssignment.newBuilder(slot).setServiceModels(instances).build();
  }

  /**
   * The slots of the planned partitions, laid out as {@link #assignments} says, without instances
   * ({@code serviceModels} empty); key host/slot. The slots of one host depend only on that host's
   * partitions and environment (and, with {@code running}, its running slots).
   */
  public static SortedMap<String, SlotAssignment> slots(PlanInputs in, PlanSettings settings,
      Collection<PartitionPlan> partitions) {
    return slots(in, settings, partitions, Map.of());
  }

  /**
   * As above, keeping the running layout of a pool ({@code running}: the live slots, key host/slot)
   * while its slots are the same partitions in the same order and the fresh layout does not lower
   * the busiest resource's load by more than {@code planner.hysteresis} ({@link CoreLayout#place(int,
   * List, List, double)}): a shared partition's layout weight is its demand times its measured time,
   * so timing noise alone moved shared slots between cores. A slot also keeps its running capacity
   * while the fresh one is within that margin ({@link #keepCapacities}).
   */
  public static SortedMap<String, SlotAssignment> slots(PlanInputs in, PlanSettings settings,
      Collection<PartitionPlan> partitions, Map<String, SlotAssignment> running) {
    List<PartitionPlan> ordered = new ArrayList<>(partitions);
    ordered.sort(Comparator.comparing((PartitionPlan p) -> p.getHost()).thenComparing(PartitionPlan::getPool)
        .thenComparing(PartitionPlan::getModel).thenComparing(PartitionPlan::getVersion));
    Map<String, List<CoreLayout.Block>> blocks = new TreeMap<>();
    Map<String, List<PartitionPlan>> owners = new TreeMap<>();
    for (PartitionPlan p : ordered) {
      if (p.getPlanned() && in.hosts().containsKey(p.getHost())) {
        for (int size : p.getSizes()) {
          String poolKey = p.getHost() + Keys.SEP + p.getPool();
          blocks.computeIfAbsent(poolKey, k -> new ArrayList<>())
              .add(new CoreLayout.Block(size, layoutWeight(p, settings), p.getPlacement().equals("split")));
          owners.computeIfAbsent(poolKey, k -> new ArrayList<>()).add(p);
        }
      }
    }
    Map<String, List<Integer>> firsts = new TreeMap<>();
    blocks.forEach((poolKey, list) -> {
      String[] hostPool = poolKey.split(Keys.SEP);
      List<Integer> ids = poolIds(in.hosts().get(hostPool[0]), hostPool[1]);
      int poolSize = Math.max(1, ids.size());
      List<Integer> before = runningFirsts(hostPool[0], hostPool[1], list, owners.get(poolKey), ids, running);
      firsts.put(poolKey, CoreLayout.place(poolSize, list, before, settings.hysteresis()));
    });
    Map<String, Integer> nextSlot = new TreeMap<>();
    SortedMap<String, SlotAssignment> out = new TreeMap<>();
    for (PartitionPlan p : ordered) {
      HostEnvironment env = in.hosts().get(p.getHost());
      if (!p.getPlanned() || env == null) {
        continue;
      }
      List<Integer> ids = poolIds(env, p.getPool());
      String poolKey = p.getHost() + Keys.SEP + p.getPool();
      int total = p.getSizes().stream().mapToInt(Integer::intValue).sum();
      for (int size : p.getSizes()) {
        int n = nextSlot.merge(poolKey, 1, Integer::sum) - 1;
        int first = firsts.get(poolKey).get(n);
        List<Integer> cpus = new ArrayList<>();
        int gpu = -1;
        if (p.getPool().equals(CPU)) {
          for (int i = first; i < first + size && i < ids.size(); i++) {
            cpus.add(ids.get(i));
          }
        } else {
          gpu = first < ids.size() ? ids.get(first) : -1;
        }
        String slot = p.getPool() + "-" + n;
        String key = Keys.hostSlot(p.getHost(), slot);
        // the plan's share, cut toward what the slot serves when its serving evidence says it is slower
        double capacity = ServedGroupings.capacity(in, settings, p, key, size, capacity(p, size, total));
        SlotAssignment fresh = SlotAssignment.newBuilder().setHost(p.getHost()).setSlot(slot)
            .setModel(p.getModel()).setVersion(p.getVersion()).setPool(p.getPool()).setCpus(cpus).setGpu(gpu)
            .setProvider(p.getProvider()).setThreads(p.getPool().equals(CPU) ? size : 0).setMaxBatch(p.getBatch())
            .setMemoryBudgetBytes(0).setCapacity(capacity).setPlanId(null).setTimestamp(0)
            .setServiceModels(List.of()).build();
        out.put(key, keepCapacity(fresh, running.get(key), settings.hysteresis()));
      }
    }
    return out;
  }

  /**
   * Where each block of a pool starts in the running layout (positions in the pool's ids), or null
   * when the running slots are not the same partitions in the same order: slot {@code <pool>-<n>}
   * must run block {@code n}'s model version (CPU: with as many threads as the block's size).
   */
  private static List<Integer> runningFirsts(String host, String pool, List<CoreLayout.Block> blocks,
      List<PartitionPlan> owners, List<Integer> ids, Map<String, SlotAssignment> running) {
    if (running.isEmpty() || running.containsKey(Keys.hostSlot(host, pool + "-" + blocks.size()))) {
      return null;
    }
    List<Integer> out = new ArrayList<>();
    for (int n = 0; n < blocks.size(); n++) {
      SlotAssignment r = running.get(Keys.hostSlot(host, pool + "-" + n));
      PartitionPlan p = owners.get(n);
      if (r == null || !r.getModel().equals(p.getModel()) || !r.getVersion().equals(p.getVersion())
          || (pool.equals(CPU) && (r.getThreads() != blocks.get(n).size() || r.getCpus().isEmpty()))) {
        return null;
      }
      int at = pool.equals(CPU) ? ids.indexOf(r.getCpus().get(0)) : ids.indexOf(r.getGpu());
      if (at < 0) {
        return null;
      }
      out.add(at);
    }
    return out;
  }

  /**
   * The instances of one base model's service models on its slots ({@link
   * io.partita.planning.allocation.InstanceAllocator}), by slot key; {@code slots} are all the slots running
   * {@code baseModel}, on every host.
   */
  public static Map<String, List<AssignedServiceModel>> instances(PlanInputs in, String baseModel,
      Collection<SlotAssignment> slots) {
    List<String> keys = new ArrayList<>();
    slots.forEach(a -> keys.add(Keys.hostSlot(a.getHost(), a.getSlot())));
    return instancesOn(in, baseModel, keys);
  }

  /** As {@link #instances}, from the keys ({@code host/slot}) of the slots running {@code baseModel}. */
  public static Map<String, List<AssignedServiceModel>> instancesOn(PlanInputs in, String baseModel,
      Collection<String> slotKeys) {
    List<SlotState> states = new ArrayList<>();
    for (String key : slotKeys) {
      states.add(new SlotState(key, hostOf(key), baseModel, Long.MAX_VALUE / 4, true, 0,
          List.of()));
    }
    List<ServiceModelSpec> specs = new ArrayList<>();
    for (ServiceModel sm : in.serviceModelsOf(baseModel).values()) {
      WeightFile file = sm.getWeightFile() == null ? null
          : new WeightFile(sm.getWeightFile().getUri(), sm.getWeightFile().getSha256(),
              sm.getWeightFile().getSizeBytes());
      specs.add(new ServiceModelSpec(sm.getName(), sm.getBaseModel(), file, Math.max(0, sm.getInstances())));
    }
    Map<String, List<AssignedServiceModel>> bySlot = new TreeMap<>();
    if (states.isEmpty() || specs.isEmpty()) {
      return bySlot;
    }
    AllocationPlan allocation = InstanceAllocator.allocate(specs, states);
    for (InstancePlacement placement : allocation.placements()) {
      ServiceModel sm = in.serviceModels().get(placement.serviceModelId());
      AssignedWeightFile file = sm.getWeightFile() == null ? null
          : new AssignedWeightFile(sm.getWeightFile().getUri(), sm.getWeightFile().getSha256());
      bySlot.computeIfAbsent(placement.slotId(), k -> new ArrayList<>()).add(AssignedServiceModel.newBuilder()
          .setServiceModel(sm.getName()).setInstanceId(instanceId(sm.getName(), placement.instance()))
          .setWeightFile(file).build());
    }
    return bySlot;
  }

  /**
   * Whether the instances of a base model stay where they are when slots are added to its slots
   * and others removed, so that they need not be allocated again: a host joining adds a slot to
   * every base model, and allocating all of them again cost half a second a pass at 1,000 hosts
   * and 500 models. The allocator ({@link #instancesOn}: healthy slots, nothing mounted, no memory
   * limit, no load) takes for each instance, in turn, the slot with the fewest instances of that
   * service model on its host, then the least load, then the one that ranks highest for the
   * service model ({@link InstanceAllocator#outranks}). So a removed slot that held no instance was
   * never taken and changes nothing. When no slot holds more than one instance, no service model
   * has two instances on one host and every instance wanted was placed, each instance was taken at
   * load 0 from a host without one of its service model; an added slot (empty) would then have been
   * taken only by outranking that slot for that service model. If it outranks none, nothing moves
   * ({@code AssignmentPlansTest} allocates again and compares).
   *
   * @param instancesBySlot the base model's slots now (key host/slot), with the instance ids each holds
   * @param added the keys of the slots added
   * @param wanted the instances its service models want in all
   */
  public static boolean allocationUnchanged(Map<String, List<String>> instancesBySlot, Collection<String> added,
      Collection<String> removed, int wanted) {
    for (String slot : removed) {
      if (!instancesBySlot.getOrDefault(slot, List.of()).isEmpty()) {
        return false;
      }
    }
    if (added.isEmpty()) {
      return true;
    }
    int placed = 0;
    Set<String> serviceModelHosts = new HashSet<>();
    Map<String, List<String>> slotsOf = new HashMap<>();
    for (Map.Entry<String, List<String>> slot : instancesBySlot.entrySet()) {
      List<String> ids = slot.getValue();
      if (ids.isEmpty()) {
        continue;
      }
      if (ids.size() > 1) {
        return false;
      }
      String host = hostOf(slot.getKey());
      String serviceModel = ids.get(0).substring(0, ids.get(0).lastIndexOf('#'));
      if (!serviceModelHosts.add(serviceModel + "\u0000" + host)) {
        return false;
      }
      slotsOf.computeIfAbsent(serviceModel, k -> new ArrayList<>()).add(slot.getKey());
      placed++;
    }
    if (placed < wanted) {
      return false;
    }
    for (String slot : added) {
      String host = hostOf(slot);
      for (Map.Entry<String, List<String>> held : slotsOf.entrySet()) {
        for (String taken : held.getValue()) {
          if (InstanceAllocator.outranks(held.getKey(), host, slot, hostOf(taken), taken)) {
            return false;
          }
        }
      }
    }
    return true;
  }

  private static String hostOf(String slotKey) {
    return slotKey.substring(0, slotKey.indexOf(Keys.SEP));
  }

  /**
   * Items per second the plan expects of one partition of {@code size} resources: the throughput
   * the grouping was chosen by ({@code expectedThroughput}: measured, or predicted times the pool's
   * interference factor), shared among the grouping's partitions in proportion to their sizes (the
   * grouping's per-size times are not kept in the plan record; most groupings cut equal sizes, where
   * this is exact). 0 for a default placement, which rests on no timing: the workers then share the
   * partitions by slot count (see the worker's capacity assignor). The slot's assignment then cuts
   * it toward what the slot serves when its serving evidence says it is slower ({@link
   * ServedGroupings#capacity}).
   */
  static double capacity(PartitionPlan p, int size, int totalSize) {
    Double expected = p.getExpectedThroughput();
    if (p.getDefaultPlan() || expected == null || !(expected > 0) || totalSize <= 0) {
      return 0;
    }
    return expected * size / totalSize;
  }

  /**
   * The planned slots, each keeping the capacity its live assignment already has when the new one
   * is within {@code margin} (relative) of it: timings that move by a few percent between runs
   * would otherwise rewrite every assignment (and make the workers share their partitions out
   * again) on each new measurement. A capacity that becomes known or unknown always changes.
   */
  public static SortedMap<String, SlotAssignment> keepCapacities(SortedMap<String, SlotAssignment> planned,
      Map<String, SlotAssignment> live, double margin) {
    SortedMap<String, SlotAssignment> out = new TreeMap<>();
    planned.forEach((key, fresh) -> out.put(key, keepCapacity(fresh, live.get(key), margin)));
    return out;
  }

  /** One slot of {@link #keepCapacities}: {@code live} is its running record, or null. */
  static SlotAssignment keepCapacity(SlotAssignment fresh, SlotAssignment live, double margin) {
    double was = live == null ? 0 : live.getCapacity();
    double now = fresh.getCapacity();
    boolean keep = was > 0 && now > 0 && was != now && !Hysteresis.replacesHigher(was, now, margin)
        && !Hysteresis.replacesLower(was, now, margin);
    return keep ? SlotAssignment.newBuilder(fresh).setCapacity(was).build() : fresh;
  }

  /**
   * How much a partition loads the resources it lies on, for laying out partitions that share
   * them: its demand (or the default rate while none is known) times its measured time per item
   * (1 ms for a default partition, which has no measurement).
   */
  static double layoutWeight(PartitionPlan p, PlanSettings settings) {
    double rate = p.getRequestsPerSecond() > 0 ? p.getRequestsPerSecond() : settings.defaultRequestsPerSecond();
    double perItem = p.getMaxLatencyMs() > 0 ? p.getMaxLatencyMs() / Math.max(1, p.getBatch()) : 1.0;
    return rate * perItem;
  }

  public static String instanceId(String serviceModel, int instance) {
    return serviceModel + "#" + instance;
  }
}

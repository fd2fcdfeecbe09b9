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
import io.partita.planning.AllocationPlan;
import io.partita.planning.CoreLayout;
import io.partita.planning.Hysteresis;
import io.partita.planning.InstanceAllocator;
import io.partita.planning.InstancePlacement;
import io.partita.planning.ServiceModelSpec;
import io.partita.planning.SlotState;
import io.partita.planning.WeightFile;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Slots and instances for the plan table {@code <p>.plan.assignments} (key host/slot): one slot
 * per planned partition, laid out on the pool's resources by {@link io.partita.planning.CoreLayout},
 * with the catalog's service model instances placed by {@link io.partita.planning.InstanceAllocator}.
 * Pure.
 */
public final class AssignmentPlans {

  private AssignmentPlans() {}

  /**
   * One slot per planned partition, {@code <pool>-<n>} numbered per host and pool in the order of
   * the partition plans' keys and their sizes (descending); CPU partitions take consecutive CPU ids
   * of the pool, GPU partitions consecutive GPU indices (the slot records the first, the
   * assignment record has one GPU field). Instances of the catalog's service models are placed on
   * these slots by {@link io.partita.planning.InstanceAllocator}; key host/slot.
   */
  public static SortedMap<String, SlotAssignment> assignments(PlanInputs in, PlanSettings settings,
      Collection<PartitionPlan> partitions) {
    List<PartitionPlan> ordered = new ArrayList<>(partitions);
    ordered.sort(Comparator.comparing((PartitionPlan p) -> p.getHost()).thenComparing(PartitionPlan::getPool)
        .thenComparing(PartitionPlan::getModel).thenComparing(PartitionPlan::getVersion));
    Map<String, SlotAssignment.Builder> slots = new LinkedHashMap<>();
    Map<String, List<CoreLayout.Block>> blocks = new TreeMap<>();
    for (PartitionPlan p : ordered) {
      if (p.getPlanned() && in.hosts().containsKey(p.getHost())) {
        for (int size : p.getSizes()) {
          blocks.computeIfAbsent(p.getHost() + Keys.SEP + p.getPool(), k -> new ArrayList<>())
              .add(new CoreLayout.Block(size, layoutWeight(p, settings), p.getPlacement().equals("split")));
        }
      }
    }
    Map<String, List<Integer>> firsts = new TreeMap<>();
    blocks.forEach((poolKey, list) -> {
      String[] hostPool = poolKey.split(Keys.SEP);
      int poolSize = Math.max(1, poolIds(in.hosts().get(hostPool[0]), hostPool[1]).size());
      firsts.put(poolKey, CoreLayout.place(poolSize, list));
    });
    Map<String, Integer> nextSlot = new TreeMap<>();
    List<SlotState> states = new ArrayList<>();
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
        slots.put(key, SlotAssignment.newBuilder().setHost(p.getHost()).setSlot(slot).setModel(p.getModel())
            .setVersion(p.getVersion()).setPool(p.getPool()).setCpus(cpus).setGpu(gpu).setProvider(p.getProvider())
            .setThreads(p.getPool().equals(CPU) ? size : 0).setMaxBatch(p.getBatch()).setMemoryBudgetBytes(0)
            .setCapacity(ServedGroupings.capacity(in, settings, p, key, size, capacity(p, size, total)))
            .setPlanId(null).setTimestamp(0));
        states.add(new SlotState(key, p.getHost(), p.getModel(), Long.MAX_VALUE / 4, true, 0, List.of()));
      }
    }
    List<ServiceModelSpec> specs = new ArrayList<>();
    for (ServiceModel sm : in.serviceModels().values()) {
      WeightFile file = sm.getWeightFile() == null ? null
          : new WeightFile(sm.getWeightFile().getUri(), sm.getWeightFile().getSha256(),
              sm.getWeightFile().getSizeBytes());
      specs.add(new ServiceModelSpec(sm.getName(), sm.getBaseModel(), file, Math.max(0, sm.getInstances())));
    }
    AllocationPlan allocation = InstanceAllocator.allocate(specs, states);
    Map<String, List<AssignedServiceModel>> bySlot = new TreeMap<>();
    for (InstancePlacement placement : allocation.placements()) {
      ServiceModel sm = in.serviceModels().get(placement.serviceModelId());
      AssignedWeightFile file = sm.getWeightFile() == null ? null
          : new AssignedWeightFile(sm.getWeightFile().getUri(), sm.getWeightFile().getSha256());
      bySlot.computeIfAbsent(placement.slotId(), k -> new ArrayList<>()).add(AssignedServiceModel.newBuilder()
          .setServiceModel(sm.getName()).setInstanceId(instanceId(sm.getName(), placement.instance()))
          .setWeightFile(file).build());
    }
    SortedMap<String, SlotAssignment> out = new TreeMap<>();
    slots.forEach((key, b) -> out.put(key, b.setServiceModels(bySlot.getOrDefault(key, List.of())).build()));
    return out;
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
    planned.forEach((key, fresh) -> {
      SlotAssignment old = live.get(key);
      double was = old == null ? 0 : old.getCapacity();
      double now = fresh.getCapacity();
      boolean keep = was > 0 && now > 0 && !Hysteresis.replacesHigher(was, now, margin) && !Hysteresis.replacesLower(was, now, margin);
      out.put(key, keep ? SlotAssignment.newBuilder(fresh).setCapacity(was).build() : fresh);
    });
    return out;
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

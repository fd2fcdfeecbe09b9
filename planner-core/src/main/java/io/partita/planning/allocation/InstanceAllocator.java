package io.partita.planning.allocation;

import io.partita.planning.Rendezvous;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Allocates the instances of service models to the slots the workers offer (docs/concepts.md, method 3).
 *
 * <p><b>Rule.</b> Service models are handled in id order, their instances one at a time. A slot can
 * take an instance of service model {@code s} when it is healthy, runs {@code s}'s base model, holds
 * no instance of {@code s} yet, and either holds {@code s}'s weight file or can mount it: its free
 * budget, after unmounting unused weight files least recently used first
 * ({@link WeightFileEvictor}), is at least the file's size. Among those, the slot chosen is the
 * first by:
 * <ol>
 *   <li>fewest instances of {@code s} already on the slot's host (spread over hosts; the design lists
 *       spreading with the other preferences without ranking it: it comes first here, because two
 *       instances on one host fail together);
 *   <li>already holds the weight file (no mount, no memory spent);
 *   <li>least loaded (fewest instances of any service model on the slot);
 *   <li>ranks highest for {@code s} ({@link Rendezvous#rank}: rendezvous hashing of the service model's id with
 *       the slot's host and id), then smallest slot id.
 * </ol>
 * The last rule is what keeps instances in place while slots come and go, with no memory of where
 * they were: where most slots are equally good (many slots, few instances), a slot that joins takes
 * an instance only if it outranks the slot chosen for it, and one that leaves moves little more
 * than its own instances. (Breaking that tie by the smallest slot id put every base model's
 * instances on the hosts with the smallest names, and moved them all when such a host came or went.)
 * Each allocation updates the state (load, mounted files, memory) before the next one.
 *
 * <p><b>Guarantees.</b> Never more than the wanted {@code k} instances of a service model, never two
 * on one slot, never on a slot of another base model or an unhealthy one, never unmounts a file in
 * use (including files mounted by this plan); instances that find no slot are reported as
 * unplaced with the reason. Deterministic and independent of the input order.
 */
public final class InstanceAllocator {

  private InstanceAllocator() {}

  private static final EvictionPlan NOTHING_TO_UNMOUNT = new EvictionPlan(List.of(), 0, true, List.of());

  private static final class Slot {
    final SlotState spec;
    final List<MountedWeight> mounted;
    long memoryLeft;
    int load;
    final Set<String> serviceModels = new LinkedHashSet<>();
    /** sha256 -> how many of {@link #mounted} carry it: {@link #holds} is asked for every slot of every instance. */
    final Map<String, Integer> mountedShas = new HashMap<>();

    Slot(SlotState spec) {
      this.spec = spec;
      this.mounted = new ArrayList<>(spec.mounted());
      this.memoryLeft = spec.memoryLeftBytes();
      this.load = spec.instances();
      mounted.forEach(m -> mountedShas.merge(m.file().sha256(), 1, Integer::sum));
    }

    boolean holds(WeightFile file) {
      return mountedShas.containsKey(file.sha256());
    }

    void mount(MountedWeight m) {
      mounted.add(m);
      mountedShas.merge(m.file().sha256(), 1, Integer::sum);
    }

    void unmountAll(String sha256) {
      int before = mounted.size();
      mounted.removeIf(m -> m.file().sha256().equals(sha256));
      if (mounted.size() != before) {
        mountedShas.remove(sha256);
      }
    }
  }

  public static AllocationPlan allocate(List<ServiceModelSpec> serviceModels, List<SlotState> slots) {
    List<Slot> state = new ArrayList<>();
    slots.stream().sorted(Comparator.comparing(SlotState::slotId)).forEach(s -> state.add(new Slot(s)));
    List<ServiceModelSpec> ordered = new ArrayList<>(serviceModels);
    ordered.sort(Comparator.comparing(ServiceModelSpec::id));
    List<InstancePlacement> placements = new ArrayList<>();
    List<AllocationPlan.Unplaced> unplaced = new ArrayList<>();
    Map<String, SlotExclusion> excluded = new TreeMap<>();
    for (ServiceModelSpec sm : ordered) {
      Map<String, Integer> perHost = new HashMap<>();
      for (int instance = 0; instance < sm.instances(); instance++) {
        Slot best = null;
        EvictionPlan bestEviction = null;
        for (Slot slot : state) {
          String why = ineligible(sm, slot);
          EvictionPlan eviction = null;
          if (why == null && sm.weightFile() != null && !slot.holds(sm.weightFile())) {
            // Enough memory left: nothing to unmount (what chooseUnmounts says, without sorting
            // the slot's files for every slot of every instance).
            eviction = slot.memoryLeft >= sm.weightFile().sizeBytes() ? NOTHING_TO_UNMOUNT
                : WeightFileEvictor.chooseUnmounts(slot.mounted, slot.memoryLeft, sm.weightFile().sizeBytes());
            if (!eviction.sufficient()) {
              why = "not enough memory to mount the weight file: " + slot.memoryLeft
                  + " B left, " + eviction.freedBytes() + " B could be freed, "
                  + sm.weightFile().sizeBytes() + " B needed";
            }
          }
          if (why != null) {
            excluded.putIfAbsent(sm.id() + "\u0000" + slot.spec.slotId(),
                new SlotExclusion(sm.id(), slot.spec.slotId(), why));
            continue;
          }
          if (best == null || prefer(sm, slot, best, perHost) < 0) {
            best = slot;
            bestEviction = eviction;
          }
        }
        if (best == null) {
          unplaced.add(new AllocationPlan.Unplaced(sm.id(), sm.instances() - instance,
              "no eligible slot left for base model " + sm.baseModel()
                  + " (see the excluded slots)"));
          break;
        }
        String why = describe(sm, best, perHost);
        boolean mount = bestEviction != null;
        List<WeightFile> unmount = mount ? bestEviction.unmount() : List.of();
        apply(sm, best, bestEviction);
        perHost.merge(best.spec.host(), 1, Integer::sum);
        placements.add(new InstancePlacement(sm.id(), instance, best.spec.slotId(), best.spec.host(),
            mount, unmount, why));
      }
    }
    return new AllocationPlan(placements, unplaced, new ArrayList<>(excluded.values()));
  }

  private static String ineligible(ServiceModelSpec sm, Slot slot) {
    if (!slot.spec.healthy()) {
      return "slot is not healthy";
    }
    if (!slot.spec.baseModel().equals(sm.baseModel())) {
      return "slot runs base model " + slot.spec.baseModel() + ", not " + sm.baseModel();
    }
    if (slot.serviceModels.contains(sm.id())) {
      return "slot already serves an instance of " + sm.id();
    }
    return null;
  }

  private static int prefer(ServiceModelSpec sm, Slot a, Slot b, Map<String, Integer> perHost) {
    int c = Integer.compare(perHost.getOrDefault(a.spec.host(), 0), perHost.getOrDefault(b.spec.host(), 0));
    if (c != 0) {
      return c;
    }
    if (sm.weightFile() != null) {
      c = Boolean.compare(b.holds(sm.weightFile()), a.holds(sm.weightFile()));
      if (c != 0) {
        return c;
      }
    }
    c = Integer.compare(a.load, b.load);
    if (c != 0) {
      return c;
    }
    return outranks(sm.id(), a.spec.host(), a.spec.slotId(), b.spec.host(), b.spec.slotId()) ? -1 : 1;
  }

  /**
   * Whether slot {@code a} beats slot {@code b} for the service model on the last preference: it
   * ranks higher, or ranks the same and has the smaller id. Distinct slots are never equal.
   */
  public static boolean outranks(String serviceModelId, String hostA, String slotA, String hostB, String slotB) {
    int c = Long.compare(Rendezvous.rank(serviceModelId, hostA, slotA), Rendezvous.rank(serviceModelId, hostB, slotB));
    return c != 0 ? c > 0 : slotA.compareTo(slotB) < 0;
  }

  private static String describe(ServiceModelSpec sm, Slot slot, Map<String, Integer> perHost) {
    StringBuilder why = new StringBuilder();
    why.append("host ").append(slot.spec.host()).append(" had ")
        .append(perHost.getOrDefault(slot.spec.host(), 0)).append(" instance(s) of ").append(sm.id());
    if (sm.weightFile() != null) {
      why.append(slot.holds(sm.weightFile()) ? "; weight file already mounted" : "; weight file to mount");
    }
    why.append("; slot load ").append(slot.load);
    return why.toString();
  }

  private static void apply(ServiceModelSpec sm, Slot slot, EvictionPlan eviction) {
    slot.load++;
    slot.serviceModels.add(sm.id());
    if (sm.weightFile() == null) {
      return;
    }
    if (eviction != null) {
      for (WeightFile gone : eviction.unmount()) {
        slot.unmountAll(gone.sha256());
        slot.memoryLeft += gone.sizeBytes();
      }
      slot.memoryLeft -= sm.weightFile().sizeBytes();
      slot.mount(new MountedWeight(sm.weightFile(), Long.MAX_VALUE, true));
    } else {
      for (int i = 0; i < slot.mounted.size(); i++) {
        MountedWeight m = slot.mounted.get(i);
        if (m.file().sha256().equals(sm.weightFile().sha256())) {
          slot.mounted.set(i, new MountedWeight(m.file(), m.lastUsedSequence(), true));
        }
      }
    }
  }
}

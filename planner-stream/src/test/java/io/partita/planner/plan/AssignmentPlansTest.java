package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A pass allocates a base model's instances again only when its slots changed in a way that can
 * move them ({@link AssignmentPlans#allocationUnchanged}): whenever it says they stay, allocating
 * again over the new slots must give exactly the instances the slots held. A slot keeps its live
 * capacity within the hysteresis margin.
 */
class AssignmentPlansTest {

  @Test
  void shouldLeaveInstancesWhereTheyAreWheneverItSaysTheyStay() {
    Random random = new Random(9);
    int said = 0;
    for (int problem = 0; problem < 3000; problem++) {
      SortedMap<String, ServiceModel> services = new TreeMap<>();
      int count = 1 + random.nextInt(5);
      for (int i = 0; i < count; i++) {
        String name = "b-" + i;
        services.put(name, ServiceModel.newBuilder().setName(name).setBaseModel("b")
            .setWeightFile(random.nextBoolean() ? null : new CatalogWeightFile("b/" + name, "f" + random.nextInt(3), 10L))
            .setInstances(random.nextInt(3)).setService(null).setLatencyObjectiveMs(null).setMinAccuracy(null)
            .setMemoryCapBytes(null).build());
      }
      PlanInputs in = new PlanInputs(new TreeMap<>(), services, new TreeMap<>(), new TreeMap<>(), new TreeMap<>(),
          new TreeMap<>(), new TreeMap<>());
      List<String> slots = new ArrayList<>();
      for (int i = 0; i < 1 + random.nextInt(8); i++) {
        String key = "h" + random.nextInt(6) + "/cpu-" + random.nextInt(3);
        if (!slots.contains(key)) {
          slots.add(key);
        }
      }
      Map<String, List<AssignedServiceModel>> before = AssignmentPlans.instancesOn(in, "b", slots);
      Map<String, List<String>> held = new TreeMap<>();
      slots.forEach(key -> held.put(key, ids(before.getOrDefault(key, List.of()))));
      List<String> added = new ArrayList<>();
      for (int i = 0; i < random.nextInt(3); i++) {
        String key = "h" + random.nextInt(8) + "/cpu-" + (3 + random.nextInt(2));
        if (!slots.contains(key) && !added.contains(key)) {
          added.add(key);
        }
      }
      List<String> removed = new ArrayList<>();
      for (String key : slots) {
        if (random.nextInt(4) == 0) {
          removed.add(key);
        }
      }
      int wanted = services.values().stream().mapToInt(ServiceModel::getInstances).sum();
      if (!AssignmentPlans.allocationUnchanged(held, added, removed, wanted)) {
        continue;
      }
      said++;
      List<String> after = new ArrayList<>(slots);
      after.removeAll(removed);
      after.addAll(added);
      Map<String, List<AssignedServiceModel>> again = AssignmentPlans.instancesOn(in, "b", after);
      for (String key : after) {
        assertThat(ids(again.getOrDefault(key, List.of()))).as("problem %d, slot %s", problem, key)
            .isEqualTo(held.getOrDefault(key, List.of()));
      }
    }
    assertThat(said).as("problems where it said the instances stay").isGreaterThan(300);
  }

  private static List<String> ids(List<AssignedServiceModel> instances) {
    List<String> out = new ArrayList<>();
    instances.forEach(a -> out.add(a.getInstanceId()));
    return out;
  }

  private static SlotAssignment slot(double capacity) {
    return SlotAssignment.newBuilder().setHost("h").setSlot("cpu-0").setModel("m").setVersion("1").setPool("cpu")
        .setCapacity(capacity).build();
  }

  private static double kept(double live, double fresh) {
    SortedMap<String, SlotAssignment> planned = new TreeMap<>(Map.of("h/cpu-0", slot(fresh)));
    return AssignmentPlans.keepCapacities(planned, Map.of("h/cpu-0", slot(live)), 0.10).get("h/cpu-0").getCapacity();
  }

  @Test
  void shouldKeepALiveCapacityWithinTheMarginAndTakeOneBeyondIt() {
    assertThat(kept(1000, 1080)).isEqualTo(1000);
    assertThat(kept(1000, 920)).isEqualTo(1000);
    assertThat(kept(1000, 1200)).isEqualTo(1200);
    assertThat(kept(1000, 300)).isEqualTo(300); // a host re-measured at a third of its speed
    assertThat(kept(0, 500)).isEqualTo(500);    // known at last
    assertThat(kept(500, 0)).isEqualTo(0);      // back to a default placement
    assertThat(AssignmentPlans.keepCapacities(new TreeMap<>(Map.of("h/cpu-0", slot(5))), Map.of(), 0.1).get("h/cpu-0")
        .getCapacity()).isEqualTo(5);
  }
}

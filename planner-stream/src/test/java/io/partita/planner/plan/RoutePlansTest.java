package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.AssignedServiceModel;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.common.Topics;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A route's on-demand entries are bounded ({@code planner.routes.on-demand.max}): up to the limit it
 * lists every other slot of the base model, as without the bound; above it, the slots that rank
 * highest for the service model, a choice that is stable when slots come and go.
 */
class RoutePlansTest {
  private static final PlanSettings SETTINGS = PlanSettings.defaults(new Topics("p"));

  private static SlotAssignment slot(String host, String slot, String... instancesOf) {
    List<AssignedServiceModel> held = new ArrayList<>();
    for (String sm : instancesOf) {
      held.add(AssignedServiceModel.newBuilder().setServiceModel(sm).setInstanceId(sm + "#0").setWeightFile(null).build());
    }
    return SlotAssignment.newBuilder().setHost(host).setSlot(slot).setModel("b").setVersion("1").setPool("cpu")
        .setServiceModels(held).setPlanId(null).build();
  }

  private static ServiceModel sm(String name) {
    return ServiceModel.newBuilder().setName(name).setBaseModel("b").setWeightFile(null).setInstances(1).setService(null)
        .setLatencyObjectiveMs(null).setMinAccuracy(null).setMemoryCapBytes(null).build();
  }

  private static PlanInputs inputs(ServiceModel... sms) {
    TreeMap<String, ServiceModel> services = new TreeMap<>();
    for (ServiceModel s : sms) {
      services.put(s.getName(), s);
    }
    return new PlanInputs(new TreeMap<>(), services, new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), new TreeMap<>(),
        new TreeMap<>());
  }

  private static List<SlotAssignment> fleet(int hosts, int slotsPerHost) {
    List<SlotAssignment> out = new ArrayList<>();
    for (int h = 0; h < hosts; h++) {
      for (int s = 0; s < slotsPerHost; s++) {
        out.add(slot("host-" + h, "cpu-" + s));
      }
    }
    return out;
  }

  private static List<String> onDemandSlots(Route route) {
    return route.getInstances().stream().filter(i -> !i.getInstanceId().contains("#"))
        .map(i -> i.getHost() + "/" + i.getSlot()).toList();
  }

  @Test
  void shouldListEveryOtherSlotOfTheBaseModelUpToTheLimit() {
    ServiceModel a = sm("a");
    List<SlotAssignment> slots = new ArrayList<>(fleet(4, 4)); // 16 slots: the default limit
    slots.set(0, slot("host-0", "cpu-0", "a"));
    Route route = RoutePlans.route(inputs(a), SETTINGS, a, List.of(slots.get(0)), slots);
    assertThat(route.getInstances()).hasSize(16);
    assertThat(route.getInstances().get(0).getInstanceId()).isEqualTo("a#0");
    assertThat(onDemandSlots(route)).as("every other slot, host then slot").hasSize(15)
        .isSortedAccordingTo(String::compareTo).doesNotContain("host-0/cpu-0");
  }

  @Test
  void shouldListThePlannedInstancesAndAtMostTheLimitOfOtherSlots() {
    ServiceModel a = sm("a");
    List<SlotAssignment> slots = new ArrayList<>(fleet(50, 4));
    SlotAssignment holding = slot("host-7", "cpu-2", "a");
    slots.set(7 * 4 + 2, holding);
    PlanSettings five = SETTINGS.withRouteOnDemandLimit(5);
    Route route = RoutePlans.route(inputs(a), five, a, List.of(holding), slots);
    assertThat(route.getInstances()).extracting(RouteInstance::getInstanceId).first().isEqualTo("a#0");
    assertThat(onDemandSlots(route)).hasSize(5).doesNotContain("host-7/cpu-2").doesNotHaveDuplicates();
    assertThat(onDemandSlots(RoutePlans.route(inputs(a), SETTINGS.withRouteOnDemandLimit(0), a, List.of(holding), slots)))
        .as("limit 0: the planned instances only").isEmpty();
  }

  @Test
  void shouldChooseTheSameSlotsWhateverTheirOrder() {
    ServiceModel a = sm("a");
    List<SlotAssignment> slots = fleet(40, 3);
    PlanSettings eight = SETTINGS.withRouteOnDemandLimit(8);
    List<String> chosen = onDemandSlots(RoutePlans.route(inputs(a), eight, a, List.of(), slots));
    Random random = new Random(3);
    for (int i = 0; i < 20; i++) {
      List<SlotAssignment> shuffled = new ArrayList<>(slots);
      Collections.shuffle(shuffled, random);
      assertThat(onDemandSlots(RoutePlans.route(inputs(a), eight, a, List.of(), shuffled))).isEqualTo(chosen);
    }
  }

  @Test
  void shouldChooseTheSameSlotsByKeyAsByAssignment() {
    Random random = new Random(11);
    for (int problem = 0; problem < 300; problem++) {
      List<SlotAssignment> slots = new ArrayList<>();
      Set<String> seen = new HashSet<>();
      int n = 1 + random.nextInt(40);
      while (slots.size() < n) {
        // host names that sort differently from their keys ("h-1/..." before "h/...")
        String host = List.of("h", "h-1", "h.2", "h1", "host-" + random.nextInt(9)).get(random.nextInt(5));
        String slot = "cpu-" + random.nextInt(6);
        if (seen.add(host + "/" + slot)) {
          slots.add(slot(host, slot));
        }
      }
      int limit = random.nextInt(8);
      String sm = "sm-" + random.nextInt(50);
      List<String> byAssignment = RoutePlans.highestRanked(slots, sm, limit).stream()
          .map(a -> a.getHost() + "/" + a.getSlot()).sorted().toList();
      List<String> byKey = RoutePlans.highestRankedKeys(slots.stream().map(a -> a.getHost() + "/" + a.getSlot()).toList(), sm, limit)
          .stream().sorted().toList();
      assertThat(byKey).as("problem %d", problem).isEqualTo(byAssignment);
    }
  }

  /**
   * Churn: a slot that leaves changes only the routes that listed it, by that one slot; a slot that
   * joins changes a route only by taking one listed slot's place. Checked for many service models
   * over a fleet many times the limit.
   */
  @Test
  void shouldKeepRoutesStableWhenASlotLeavesOrJoins() {
    PlanSettings eight = SETTINGS.withRouteOnDemandLimit(8);
    List<SlotAssignment> slots = fleet(60, 2);
    SlotAssignment leaving = slots.get(17);
    List<SlotAssignment> without = new ArrayList<>(slots);
    without.remove(leaving);
    SlotAssignment joining = slot("host-new", "cpu-0");
    List<SlotAssignment> with = new ArrayList<>(slots);
    with.add(joining);
    int listedTheLeaving = 0;
    int tookTheJoining = 0;
    for (int i = 0; i < 200; i++) {
      ServiceModel s = sm("sm-" + i);
      PlanInputs in = inputs(s);
      Set<String> before = new HashSet<>(onDemandSlots(RoutePlans.route(in, eight, s, List.of(), slots)));
      Set<String> afterLeave = new HashSet<>(onDemandSlots(RoutePlans.route(in, eight, s, List.of(), without)));
      Set<String> afterJoin = new HashSet<>(onDemandSlots(RoutePlans.route(in, eight, s, List.of(), with)));
      String left = leaving.getHost() + "/" + leaving.getSlot();
      if (before.contains(left)) {
        listedTheLeaving++;
        Set<String> kept = new HashSet<>(before);
        kept.remove(left);
        assertThat(afterLeave).as("sm-%d: the others stay, one slot takes its place", i).containsAll(kept).hasSize(8);
      } else {
        assertThat(afterLeave).as("sm-%d did not list the slot that left", i).isEqualTo(before);
      }
      if (afterJoin.contains("host-new/cpu-0")) {
        tookTheJoining++;
        Set<String> lost = new HashSet<>(before);
        lost.removeAll(afterJoin);
        assertThat(lost).as("sm-%d: the joining slot takes one listed slot's place", i).hasSize(1);
      } else {
        assertThat(afterJoin).as("sm-%d: the joining slot ranks below every listed one", i).isEqualTo(before);
      }
    }
    // 8 of 120 slots listed: about 1 in 15 routes lists any given slot. Spread, not all on the same slots.
    assertThat(listedTheLeaving).isBetween(3, 40);
    assertThat(tookTheJoining).isBetween(3, 40);
  }
}

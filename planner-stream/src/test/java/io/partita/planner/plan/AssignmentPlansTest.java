package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.SlotAssignment;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class AssignmentPlansTest {
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

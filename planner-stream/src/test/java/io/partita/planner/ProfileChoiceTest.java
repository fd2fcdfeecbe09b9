package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.PlanInputs;
import io.partita.planner.plan.Plans;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Which (provider, batch) profile a host's partition plan is made from: a batch whose runs fit the
 * model's latency objective comes before a larger one that no size can run within it (a slow host
 * measured every batch would otherwise be planned at its largest and left unplanned).
 */
class ProfileChoiceTest {

  private static TimingEvent at(int batch, double p50Ms) {
    return TimingEvent.newBuilder(timing("m", "1", "slow", "cpu", 1, p50Ms)).setBatch(batch).build();
  }

  private static PlanInputs inputs(Double latencyObjectiveMs, TimingEvent... timings) {
    TreeMap<String, TimingEvent> byKey = new TreeMap<>();
    for (TimingEvent e : timings) {
      byKey.put(Keys.timing(e), e);
    }
    ServiceModel sm = ServiceModel.newBuilder(serviceModel("m", "m", 1)).setLatencyObjectiveMs(latencyObjectiveMs).build();
    return new PlanInputs(new TreeMap<>(Map.of("m/1", version("m", "1", "CPU"))), new TreeMap<>(Map.of("m", sm)),
        new TreeMap<>(Map.of("slow", host("slow", 1, 0))), new TreeMap<>(), new TreeMap<>(), byKey, new TreeMap<>());
  }

  @Test
  void shouldTakeTheLargestBatchWhenThereIsNoLatencyObjective() {
    assertThat(Plans.profile(inputs(null, at(1, 2.0), at(8, 9.0), at(32, 31.0)), "m", "1", "slow", "cpu").batch())
        .isEqualTo(32);
  }

  @Test
  void shouldTakeTheLargestBatchThatFitsTheLatencyObjective() {
    assertThat(Plans.profile(inputs(8.0, at(1, 2.0), at(4, 6.0), at(8, 9.0), at(32, 31.0)), "m", "1", "slow", "cpu")
        .batch()).isEqualTo(4);
  }

  @Test
  void shouldFallBackToTheUsualChoiceWhenNoBatchFits() {
    // the plan then says why nothing is eligible, from the profile it would have used
    assertThat(Plans.profile(inputs(1.0, at(1, 2.0), at(32, 31.0)), "m", "1", "slow", "cpu").batch()).isEqualTo(32);
  }
}

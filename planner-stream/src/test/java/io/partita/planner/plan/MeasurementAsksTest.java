package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.GroupingOption;
import io.partita.avro.PartitionPlan;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the planner asks for, and when: one outstanding request per host/pool, rate-limited. Pure. */
class MeasurementAsksTest {
  private static final MeasureSettings SETTINGS = new MeasureSettings(true, 0.25, 60_000, 600_000, 3_600_000, 0);

  private static PartitionPlan plan(String model, List<Integer> sizes, String basis, double expected,
      List<Integer> next, String nextBasis, double nextExpected) {
    return PartitionPlan.newBuilder().setModel(model).setVersion("1").setHost("h").setPool("cpu").setProvider("CPU")
        .setBatch(4).setPoolSize(4).setShareResources(2).setShareMemoryBytes(1).setRequestsPerSecond(1).setPlanned(true)
        .setSizes(sizes).setPredictedThroughput(expected).setMeasuredThroughput(null).setMaxLatencyMs(1).setMemoryBytes(1)
        .setUnmetRequestsPerSecond(0).setRunnersUp(List.of(GroupingOption.newBuilder().setSizes(next).setThroughput(nextExpected)
            .setMaxLatencyMs(1).setBasis(nextBasis).setExpectedThroughput(nextExpected).setMeasuredThroughput(null).build()))
        .setExcludedSizes(List.of()).setNoEligibleReason(null).setMethod("dp-1d").setPlacement("split").setDefaultPlan(false)
        .setBasis(basis).setExpectedThroughput(expected).setInterferenceFactor(1.0).setWhy(null).build();
  }

  @Test
  void shouldWantThePredictedChoiceAndACloseRunnerUpButNotAFarOneOrAMeasuredOne() {
    assertThat(MeasurementAsks.wanted(plan("a", List.of(1, 1), "predicted", 200, List.of(2), "predicted", 160), 0.25))
        .containsExactly(List.of(1, 1), List.of(2));
    assertThat(MeasurementAsks.wanted(plan("a", List.of(1, 1), "predicted", 200, List.of(2), "predicted", 140), 0.25))
        .containsExactly(List.of(1, 1));
    assertThat(MeasurementAsks.wanted(plan("a", List.of(1, 1), "measured", 200, List.of(2), "measured", 190), 0.25))
        .isEmpty();
  }

  @Test
  void shouldWantNothingOfAPlanPredictedFromAnotherHostsTimings() {
    PartitionPlan fromOther = PartitionPlan.newBuilder(plan("a", List.of(1, 1), "predicted", 200, List.of(2), "predicted",
        160)).setPredictedFrom("lab").build();

    assertThat(MeasurementAsks.wanted(fromOther, 0.25)).isEmpty();
  }

  @Test
  void shouldAskOnceThenWaitForTheAnswerThenForTheIntervalBeforeAskingAboutAnotherModel() {
    List<PartitionPlan> plans = List.of(plan("a", List.of(1, 1), "predicted", 200, List.of(2), "predicted", 100),
        plan("b", List.of(2), "predicted", 50, List.of(1, 1), "predicted", 10));

    MeasurementAsks.Decision first = MeasurementAsks.decide("h", "cpu", plans, null, k -> false, 1_000, SETTINGS);
    assertThat(first.request().getModel()).isEqualTo("a");
    assertThat(first.request().getGroupings()).containsExactly(List.of(1, 1));
    assertThat(first.request().getBatches()).containsExactly(4);
    assertThat(first.state().open()).containsExactly("a/1/h/cpu/4/CPU/1,1");

    // outstanding: model b waits, and the pool is looked at again when the request times out
    MeasurementAsks.Decision waiting = MeasurementAsks.decide("h", "cpu", plans, first.state(),
        k -> k.startsWith("a/"), 2_000, SETTINGS);
    assertThat(waiting.request()).isNull();
    assertThat(waiting.state().lookAgainAtMs()).isEqualTo(1_000 + 600_000);

    // answered 10 s later: still within the interval of 60 s
    AskState answered = first.state().answered(first.request().getRequestId(), "a/1/h/cpu/4/CPU/1,1");
    assertThat(answered.outstanding(11_000, SETTINGS)).isFalse();
    MeasurementAsks.Decision limited = MeasurementAsks.decide("h", "cpu", plans, answered, k -> k.startsWith("a/"),
        11_000, SETTINGS);
    assertThat(limited.request()).isNull();
    assertThat(limited.state().lookAgainAtMs()).isEqualTo(61_000);

    MeasurementAsks.Decision next = MeasurementAsks.decide("h", "cpu", plans, limited.state(), k -> k.startsWith("a/"),
        61_000, SETTINGS);
    assertThat(next.request().getModel()).isEqualTo("b");
    assertThat(next.request().getGroupings()).containsExactly(List.of(2));
  }

  @Test
  void shouldStopWaitingForARequestThatTimedOut() {
    AskState state = new AskState("planner-h-cpu-0", 0, List.of("k"), 0);
    assertThat(state.outstanding(599_999, SETTINGS)).isTrue();
    assertThat(state.outstanding(600_000, SETTINGS)).isFalse();
    assertThat(AskState.decode(state.encode())).isEqualTo(state);
    assertThat(state.answered("other-request", "k")).isSameAs(state);
  }
}

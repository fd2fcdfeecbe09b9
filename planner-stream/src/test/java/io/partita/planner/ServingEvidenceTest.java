package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.ready;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.serving;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.partita.avro.HostEnvironment;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.planner.plan.AssignmentPlans;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.PartitionPlans;
import io.partita.planner.plan.PlanInputs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.plan.ServedGroupings;
import io.partita.planner.plan.ServingSettings;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Plans that learn from live serving (pure: {@link ServedGroupings}, {@link PartitionPlans},
 * {@link AssignmentPlans}). A 2-core host whose single-size points (batch 1: T(1) = 10 ms, T(2) =
 * 6 ms) predict {1,1} at 200/s ahead of {2} at 166.7/s runs {1,1} on slots cpu-0 and cpu-1; their
 * statuses report what they ran over a 30 s window, at some speed relative to the profile.
 */
class ServingEvidenceTest {
  private static final PlanSettings SETTINGS = PlanSettings.defaults(new Topics("t"));
  private static final String KEY = "mlp/1/host-a/cpu";
  private static final String GROUPING_11 = "mlp/1/host-a/cpu/1/CPU/1,1";
  private static final long WINDOW = 30_000;

  private static PlanInputs inputs(Map<String, SlotStatus> statuses, Map<String, TimingEvent> groupings) {
    return inputs(statuses, groupings, Map.of());
  }

  /** {@code others}: hosts beside host-a. */
  private static PlanInputs inputs(Map<String, SlotStatus> statuses, Map<String, TimingEvent> groupings,
      Map<String, HostEnvironment> others) {
    SortedMap<String, HostEnvironment> hosts = new TreeMap<>(others);
    hosts.put("host-a", host("host-a", 2, 0));
    SortedMap<String, TimingEvent> matrix = new TreeMap<>();
    for (TimingEvent t : List.of(timing("mlp", "1", "host-a", "cpu", 1, 10.0), timing("mlp", "1", "host-a", "cpu", 2, 6.0))) {
      matrix.put(Keys.timing(t), t);
    }
    return new PlanInputs(new TreeMap<>(Map.of("mlp/1", version("mlp", "1", "CPU"))),
        new TreeMap<>(Map.of("mlp", serviceModel("mlp", "mlp", 2))), hosts, new TreeMap<>(statuses), new TreeMap<>(), matrix, new TreeMap<>(groupings));
  }

  private static SortedMap<String, PartitionPlan> plan(PlanInputs in, Map<String, PartitionPlan> running) {
    return PartitionPlans.partitions(in, SETTINGS, "host-a", Map.of("mlp", "1"), Map.of(), running);
  }

  /** A slot of the plan that ran {@code runs} batches of 1 at {@code speed} times the profile (10 ms a run) by {@code at}. */
  private static SlotStatus slot(String slot, long at, long runs, double speed) {
    return serving(ready("host-a", slot, "mlp", "1", "mlp#0"), at, WINDOW, 1, runs, runs * 10.0 / speed);
  }

  private static Map<String, SlotStatus> both(long at, long runs, double speed) {
    return Map.of("host-a/cpu-0", slot("cpu-0", at, runs, speed), "host-a/cpu-1", slot("cpu-1", at, runs, speed));
  }

  /** What the planner records from the statuses, then the plan it makes with that record, the running plan being {@code before}. */
  private static PartitionPlan replanned(Map<String, SlotStatus> statuses, Map<String, TimingEvent> recorded,
      PartitionPlan before) {
    PlanInputs in = inputs(statuses, recorded);
    SortedMap<String, SlotAssignment> slots = AssignmentPlans.assignments(in, SETTINGS, List.of(before));
    Map<String, TimingEvent> after = new TreeMap<>(recorded);
    ServedGroupings.measurements(in, SETTINGS, "host-a", List.of(before), slots.values())
        .forEach(e -> after.put(Keys.groupingRecord(e), e));
    return plan(inputs(statuses, after), Map.of(KEY, before)).get(KEY);
  }

  private static PartitionPlan predicted() {
    PartitionPlan plan = plan(inputs(Map.of(), Map.of()), Map.of()).get(KEY);
    assertThat(plan.getSizes()).containsExactly(1, 1);
    assertThat(plan.getBasis()).isEqualTo("predicted");
    return plan;
  }

  static Stream<Arguments> groupings() {
    // Idle figures here are the predictions (no profiler measurement): under serving they are
    // multiplied by what serving costs on the pool, {1,1}'s served figure over its prediction.
    return Stream.of(
        // name, runs per slot, speed, sizes, basis, measured throughput, why starts with
        Arguments.of("serving at 0.95 of the profile: {1,1} measured from serving", 1000, 0.95, List.of(1, 1), "measured",
            190.0, "[1, 1] measured from serving 190.0/s (predicted 200.0/s), ahead of [2] predicted 166.7/s x serving 0.95 = 158.3/s"),
        Arguments.of("at 0.6: {2} under the same serving costs is 100/s, no switch", 1000, 0.6, List.of(1, 1),
            "measured", 120.0, "[1, 1] measured from serving 120.0/s (predicted 200.0/s), ahead of [2] predicted 166.7/s x serving 0.60 = 100.0/s"),
        Arguments.of("at 0.1 (a job's load): still no switch", 1000, 0.1, List.of(1, 1),
            "measured", 20.0, "[1, 1] measured from serving 20.0/s (predicted 200.0/s), ahead of [2] predicted 166.7/s x serving 0.10 = 16.7/s"),
        Arguments.of("at 0.6 but 20 runs in 30 s: too little to call it measured", 10, 0.6, List.of(1, 1), "predicted",
            null, "[1, 1] predicted 200.0/s"));
  }

  /** The profiler's idle grouping-mode figure of {@code sizes}, measured at 50 s. */
  private static TimingEvent idle(List<Integer> sizes, double throughput) {
    int size = sizes.stream().mapToInt(Integer::intValue).sum();
    return TimingEvent.newBuilder(timing("mlp", "1", "host-a", "cpu", size, 10.0)).setGrouping(sizes)
        .setThroughput(throughput).setCondition("IDLE").setTimestamp(50_000).build();
  }

  static Stream<Arguments> underLoad() {
    return Stream.of(
        // name, {1,1}'s idle figure (null: its prediction x f(2)), {2}'s, the slots' speed, sizes, expected throughput, why
        Arguments.of("{1,1} served at 0.1 of its idle 140/s (200 x f(2) = 0.7), {2} idle at 0.7 of its prediction: no switch",
            null, 116.7, 0.07, List.of(1, 1), 14.0,
            "[1, 1] measured from serving 14.0/s (predicted 200.0/s), ahead of [2] measured idle 116.7/s x serving 0.10 = 11.7/s"),
        Arguments.of("the same, {1,1}'s idle figure measured by the profiler", 140.0, 116.7, 0.07, List.of(1, 1), 14.0,
            "[1, 1] measured from serving 14.0/s (predicted 200.0/s), ahead of [2] measured idle 116.7/s x serving 0.10 = 11.7/s"),
        Arguments.of("{2} idle at 166.7/s, 19 % better than {1,1}'s 140/s under the same serving costs: switch", 140.0,
            166.7, 0.07, List.of(2), 16.67,
            "[2] measured idle 166.7/s x serving 0.10 = 16.7/s, ahead of [1, 1] measured from serving 14.0/s"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("underLoad")
  void shouldNotSwitchUnderLoadUnlessTheAlternativeIsBetterUnderTheSameServingCosts(String name, Double idle11,
      double idle2, double speed, List<Integer> sizes, double expected, String why) {
    Map<String, TimingEvent> profiled = new TreeMap<>(Map.of("mlp/1/host-a/cpu/1/CPU/2", idle(List.of(2), idle2)));
    if (idle11 != null) {
      profiled.put(GROUPING_11, idle(List.of(1, 1), idle11));
    }
    // {1,1} runs (planned before the profiler's figures arrived); its slots serve at {@code speed} of the profile
    PartitionPlan plan = replanned(both(100_000, 1000, speed), profiled, predicted());

    assertThat(plan.getSizes()).isEqualTo(sizes);
    assertThat(plan.getBasis()).isEqualTo("measured");
    assertThat(plan.getExpectedThroughput()).isCloseTo(expected, offset(0.01));
    assertThat(plan.getWhy()).startsWith(why);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("groupings")
  void shouldCompareTheRunningGroupingByWhatItServed(String name, int runs, double speed, List<Integer> sizes,
      String basis, Double measured, String why) {
    PartitionPlan plan = replanned(both(100_000, runs, speed), Map.of(), predicted());

    assertThat(plan.getSizes()).isEqualTo(sizes);
    assertThat(plan.getBasis()).isEqualTo(basis);
    if (measured == null) {
      assertThat(plan.getMeasuredThroughput()).isNull();
    } else {
      assertThat(plan.getMeasuredThroughput()).isCloseTo(measured, offset(1e-6));
      assertThat(plan.getExpectedThroughput()).isCloseTo(measured, offset(1e-6));
    }
    assertThat(plan.getWhy()).startsWith(why);
  }

  @Test
  void shouldRecordAGroupingModeEventFromServingThatSaysWhereItCameFrom() {
    PartitionPlan before = predicted();
    PlanInputs in = inputs(both(100_000, 1000, 0.95), Map.of());
    List<TimingEvent> recorded = ServedGroupings.measurements(in, SETTINGS, "host-a", List.of(before),
        AssignmentPlans.assignments(in, SETTINGS, List.of(before)).values());

    assertThat(recorded).hasSize(1);
    TimingEvent e = recorded.get(0);
    assertThat(Keys.grouping(e)).isEqualTo(GROUPING_11);
    assertThat(Keys.groupingRecord(e)).as("kept beside the profiler's figure").isEqualTo(GROUPING_11 + "/serving");
    assertThat(e.getCondition()).isEqualTo(ServedGroupings.SERVING);
    assertThat(e.getThroughput()).isCloseTo(190.0, offset(1e-6));
    assertThat(e.getP50Ms()).as("a run of batch 1 at 0.95 of 10 ms").isCloseTo(10 / 0.95, offset(1e-6));
    assertThat(e.getSamples()).isEqualTo(2000);
    assertThat(e.getTimestamp()).as("the window's end").isEqualTo(100_000);
    assertThat(e.getRequestId()).isNull();
    assertThat(e.getOk() && e.getStable()).isTrue();

    // The same window again (the statuses did not move on): already recorded, nothing new
    assertThat(ServedGroupings.measurements(inputs(both(100_000, 1000, 0.6), Map.of(Keys.groupingRecord(e), e)), SETTINGS, "host-a",
        List.of(before), AssignmentPlans.assignments(in, SETTINGS, List.of(before)).values())).isEmpty();
    // Serving evidence off: nothing
    PlanSettings off = SETTINGS.withServing(ServingSettings.OFF);
    assertThat(ServedGroupings.measurements(in, off, "host-a", List.of(before),
        AssignmentPlans.assignments(in, off, List.of(before)).values())).isEmpty();
  }

  static Stream<Arguments> weights() {
    // The profiler measured {1,1} at 200/s (t = 50 s); the window (ending at 100 s) saw it serve at half of the profile.
    // With no serving figure yet, the window moves the profiler's figure by its weight (recorded beside it).
    return Stream.of(
        // name, runs per slot, recorded figure (null = nothing new)
        Arguments.of("6 runs each, 0.24 s of runs: weight 0.24 moves 200 a quarter of the way to 100", 6, 176.0),
        Arguments.of("2 runs each: weight 0.08 moves it by 4 %, within the hysteresis: nothing new", 2, null),
        Arguments.of("100 runs each, 4 s of runs: full weight", 100, 100.0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("weights")
  void shouldWeighEvidenceFromLittleTrafficLittle(String name, int runs, Double figure) {
    PartitionPlan before = predicted();
    TimingEvent profiled = TimingEvent.newBuilder(timing("mlp", "1", "host-a", "cpu", 2, 10.0)).setGrouping(List.of(1, 1))
        .setThroughput(200.0).setCondition("IDLE").setTimestamp(50_000).build();
    PlanInputs in = inputs(both(100_000, runs, 0.5), Map.of(GROUPING_11, profiled));

    List<TimingEvent> recorded = ServedGroupings.measurements(in, SETTINGS, "host-a", List.of(before),
        AssignmentPlans.assignments(in, SETTINGS, List.of(before)).values());

    if (figure == null) {
      assertThat(recorded).isEmpty();
    } else {
      assertThat(recorded).hasSize(1);
      assertThat(recorded.get(0).getThroughput()).isCloseTo(figure, offset(1e-6));
    }
  }

  static Stream<Arguments> recoveries() {
    // The profiler measured {1,1} at 200/s (t = 50 s); serving cut it to 20/s (a host slowed to a
    // tenth, recorded at 100 s). Each case is one later window of both slots (runs per slot, speed).
    return Stream.of(
        // name, window end, runs per slot, speed, recorded figure (null = nothing new)
        Arguments.of("a window after the cut with no runs at all (its share was taken away): half way back", 140_000L, 0,
            1.0, 110.0),
        Arguments.of("a light window (weight 0.1) of runs at full speed again: half way to what they ran at", 140_000L, 5,
            1.0, 110.0),
        Arguments.of("a light window of runs at 0.6 of the profile: half way to 120/s", 140_000L, 5, 0.6, 70.0),
        Arguments.of("a light window still at a tenth: nothing comes back, nothing new either", 140_000L, 5, 0.1, null),
        Arguments.of("a full window still at a tenth: the regular update, no news", 140_000L, 1000, 0.1, null),
        Arguments.of("a full window at full speed: the regular update takes it", 140_000L, 1000, 1.0, 200.0),
        Arguments.of("a window with no runs that overlaps the cut's record: nothing", 120_000L, 0, 1.0, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("recoveries")
  void shouldBringACutServingFigureBackWhenItsSlotsServeNothingOrServeFasterAgain(String name, long end, int runs,
      double speed, Double figure) {
    PartitionPlan before = predicted();
    TimingEvent profiled = TimingEvent.newBuilder(timing("mlp", "1", "host-a", "cpu", 2, 10.0)).setGrouping(List.of(1, 1))
        .setThroughput(200.0).setCondition("IDLE").setTimestamp(50_000).build();
    TimingEvent cut = TimingEvent.newBuilder(profiled).setThroughput(20.0).setP50Ms(100.0)
        .setCondition(ServedGroupings.SERVING).setTimestamp(100_000).build();
    PlanInputs in = inputs(both(end, runs, speed), Map.of(GROUPING_11, profiled, Keys.groupingRecord(cut), cut));

    List<TimingEvent> recorded = ServedGroupings.measurements(in, SETTINGS, "host-a", List.of(before),
        AssignmentPlans.assignments(in, SETTINGS, List.of(before)).values());

    if (figure == null) {
      assertThat(recorded).isEmpty();
    } else {
      assertThat(recorded).singleElement().satisfies(e -> {
        assertThat(e.getThroughput()).isCloseTo(figure, offset(1e-6));
        assertThat(e.getCondition()).isEqualTo(ServedGroupings.SERVING);
        assertThat(Keys.groupingRecord(e)).isEqualTo(Keys.groupingRecord(cut));
        assertThat(e.getTimestamp()).isEqualTo(end);
      });
    }
  }

  @Test
  void shouldGiveASlowedHostsShareBackOnceItsCutFigureRecovered() {
    PartitionPlan before = predicted();
    TimingEvent profiled = TimingEvent.newBuilder(timing("mlp", "1", "host-a", "cpu", 2, 10.0)).setGrouping(List.of(1, 1))
        .setThroughput(200.0).setCondition("IDLE").setTimestamp(50_000).build();
    TimingEvent cut = TimingEvent.newBuilder(profiled).setThroughput(20.0).setP50Ms(100.0)
        .setCondition(ServedGroupings.SERVING).setTimestamp(100_000).build();
    Map<String, TimingEvent> recorded = new TreeMap<>(Map.of(GROUPING_11, profiled, Keys.groupingRecord(cut), cut));
    PartitionPlan plan = replanned(both(105_000, 0, 1.0), recorded, before);
    assertThat(plan.getExpectedThroughput()).as("cut").isCloseTo(20.0, offset(1e-6));

    // windows with no runs, 40 s apart: the figure comes back half way each time
    long end = 100_000;
    double[] expected = {110.0, 155.0, 177.5};
    for (double figure : expected) {
      end += 40_000;
      PlanInputs in = inputs(both(end, 0, 1.0), recorded);
      List<TimingEvent> back = ServedGroupings.measurements(in, SETTINGS, "host-a", List.of(plan),
          AssignmentPlans.assignments(in, SETTINGS, List.of(plan)).values());
      assertThat(back).singleElement().satisfies(e -> assertThat(e.getThroughput()).isCloseTo(figure, offset(1e-6)));
      back.forEach(e -> recorded.put(Keys.groupingRecord(e), e));
      plan = plan(inputs(both(end, 0, 1.0), recorded), Map.of(KEY, plan)).get(KEY);
      assertThat(plan.getExpectedThroughput()).isCloseTo(figure, offset(1e-6));
    }
  }

  static Stream<Arguments> capacities() {
    return Stream.of(
        // name, cpu-0's runs, its speed, its capacity (the plan expects 100/s of each slot)
        Arguments.of("serving as profiled", 1000, 1.0, 100.0),
        Arguments.of("at a tenth of the profile (its CPU cut)", 1000, 0.1, 10.0),
        Arguments.of("at a tenth, one run in the window (weight 0.1)", 1, 0.1, 91.0),
        Arguments.of("recovered", 1000, 1.0, 100.0),
        Arguments.of("idle: no evidence", 0, 1.0, 100.0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("capacities")
  void shouldCutTheCapacityOfASlotThatServesSlowerThanPlannedAndGiveItBack(String name, int runs, double speed,
      double capacity) {
    PartitionPlan plan = predicted();
    Map<String, SlotStatus> statuses = Map.of("host-a/cpu-0", slot("cpu-0", 100_000, runs, speed),
        "host-a/cpu-1", slot("cpu-1", 100_000, 1000, 1.0));

    SortedMap<String, SlotAssignment> slots = AssignmentPlans.assignments(inputs(statuses, Map.of()), SETTINGS, List.of(plan));

    assertThat(slots.get("host-a/cpu-0").getCapacity()).isCloseTo(capacity, offset(1e-6));
    assertThat(slots.get("host-a/cpu-1").getCapacity()).as("the other slot").isCloseTo(100.0, offset(1e-6));
  }

  /**
   * The plan expects 100/s of a slot from the engine (10 ms a run); its worker says an item costs
   * 15 ms of the host beyond the run. The slot serves 1 / (10 ms + 15 ms) = 40/s, and that is the
   * capacity the partitions are shared by; cut by slower evidence first, then counted.
   */
  @Test
  void shouldCountWhatAnItemCostsTheWorkerBeyondTheRunInTheSlotsCapacity() {
    PartitionPlan plan = predicted();
    SlotStatus asProfiled = withOverhead(slot("cpu-0", 100_000, 1000, 1.0), 15_000_000L);
    SlotStatus atATenth = withOverhead(slot("cpu-1", 100_000, 1000, 0.1), 15_000_000L);

    SortedMap<String, SlotAssignment> slots = AssignmentPlans.assignments(
        inputs(Map.of("host-a/cpu-0", asProfiled, "host-a/cpu-1", atATenth), Map.of()), SETTINGS, List.of(plan));

    assertThat(slots.get("host-a/cpu-0").getCapacity()).isCloseTo(40.0, offset(1e-6));
    assertThat(slots.get("host-a/cpu-1").getCapacity()).as("10/s from the engine, then 1 / (100 ms + 15 ms)")
        .isCloseTo(1 / 0.115, offset(1e-6));
  }

  /**
   * host-a's worker has not said what an item costs it (it served too little); host-b's says 30 ms
   * of its half core, 15 ms of CPU. host-a's slots are given 15 ms of CPU over its two cores, 7.5 ms
   * an item: 1 / (10 ms + 7.5 ms). Counted as nothing, they would keep the engine's 100/s and draw
   * the partitions away from every host that said.
   */
  @Test
  void shouldGiveAHostThatHasNotSaidTheOtherHostsCpuPerItemOverItsBudget() {
    PartitionPlan plan = predicted();
    SlotStatus other = withOverhead(serving(ready("host-b", "cpu-0", "mlp", "1", "mlp#1"), 100_000, WINDOW, 1, 10, 100.0),
        30_000_000L);
    PlanInputs in = inputs(Map.of("host-a/cpu-0", slot("cpu-0", 100_000, 1000, 1.0), "host-a/cpu-1", slot("cpu-1", 100_000, 0, 1.0),
        "host-b/cpu-0", other), Map.of(), Map.of("host-b", HostEnvironment.newBuilder(host("host-b", 1, 0)).setCpuQuotaCores(0.5).build()));

    SortedMap<String, SlotAssignment> slots = AssignmentPlans.assignments(in, SETTINGS, List.of(plan));

    assertThat(slots.get("host-a/cpu-0").getCapacity()).isCloseTo(1 / 0.0175, offset(1e-6));
    assertThat(slots.get("host-a/cpu-1").getCapacity()).as("a slot that ran nothing yet").isCloseTo(1 / 0.0175, offset(1e-6));
  }

  private static SlotStatus withOverhead(SlotStatus status, long nanos) {
    return SlotStatus.newBuilder(status).setServing(ServingEvidence.newBuilder(status.getServing()).setItemOverheadNanos(nanos).build())
        .build();
  }

  @Test
  void shouldIgnoreTheStatusOfASlotThatRunsSomethingElseThanThePlanAssignedThere() {
    PartitionPlan plan = predicted();
    SlotStatus twoThreads = SlotStatus.newBuilder(slot("cpu-0", 100_000, 1000, 0.1)).setThreads(2).build();
    SlotStatus otherModel = SlotStatus.newBuilder(slot("cpu-0", 100_000, 1000, 0.1)).setModel("other").build();
    for (SlotStatus status : List.of(twoThreads, otherModel)) {
      PlanInputs in = inputs(Map.of("host-a/cpu-0", status, "host-a/cpu-1", slot("cpu-1", 100_000, 1000, 0.1)), Map.of());
      SortedMap<String, SlotAssignment> slots = AssignmentPlans.assignments(in, SETTINGS, List.of(plan));
      assertThat(slots.get("host-a/cpu-0").getCapacity()).isCloseTo(100.0, offset(1e-6));
      assertThat(ServedGroupings.measurements(in, SETTINGS, "host-a", List.of(plan), slots.values()))
          .as("a grouping with a slot that does not run it is not measured").isEmpty();
    }
  }
}

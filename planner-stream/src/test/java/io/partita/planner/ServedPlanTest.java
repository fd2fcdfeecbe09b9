package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.ready;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.serving;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.partita.avro.PartitionPlan;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.plan.ServedGroupings;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import java.nio.file.Path;
import java.util.List;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plans that learn from live serving, through the topology the planner runs (the test driver over
 * {@code PlannerTopology.build}): two one-core hosts with the same single-size point (10 ms a run
 * of 1: 100/s each) run one slot each; their SlotStatus records report what the slots ran. The
 * planner records a grouping-mode measurement from serving on the timings topic, reads it back,
 * and the partition plans rest on it; a host that serves at a tenth of its profile (its CPU cut)
 * gets a tenth of the capacity, and gets it back when it serves as profiled again.
 */
class ServedPlanTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private final Topics topics = new Topics("t");
  private final PlanSettings settings = PlanSettings.defaults(topics);
  @TempDir Path stateDir;
  private PlanRun run;

  @BeforeEach
  void start() {
    run = new PlanRun(settings, CODECS, stateDir);
  }

  @AfterEach
  void stop() {
    run.close();
  }

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void pipe(String topic, String key, T value, long ts) {
    run.pipe(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value), ts);
  }

  private <T extends SpecificRecord> T plan(PlanTable table, String key, Class<T> type) {
    return CODECS.codec(type).decode(table.topic(topics), run.tables().get(table).get(key));
  }

  private PartitionPlan partitions(String host) {
    return plan(PlanTable.PARTITIONS, "mlp/1/" + host + "/cpu", PartitionPlan.class);
  }

  private double capacity(String host) {
    return plan(PlanTable.ASSIGNMENTS, host + "/cpu-0", SlotAssignment.class).getCapacity();
  }

  /** The slot of {@code host} reports a 30 s window ending at {@code at}: 1000 runs of 1 at {@code speed} times the profile. */
  private void status(String host, long at, double speed) {
    SlotStatus s = serving(ready(host, "cpu-0", "mlp", "1", "mlp#0"), at, 30_000, 1, 1000, 1000 * 10.0 / speed);
    pipe(topics.workerStatus(), host + "/cpu-0", s, at);
  }

  /** The catalog's mlp and two one-core hosts with the same single-size point (10 ms a run of 1), planned once. */
  private void twoHostsProfiledAlike() {
    pipe(topics.catalogModels(), "mlp/1", version("mlp", "1", "CPU"), 1000);
    pipe(topics.catalogServices(), "mlp", serviceModel("mlp", "mlp", 2), 1000);
    for (String host : List.of("host-a", "host-b")) {
      pipe(topics.hostEnvironments(), host, host(host, 1, 0), 1000);
      pipe(topics.profileTimings(), host + "-t1", timing("mlp", "1", host, "cpu", 1, 10.0), 1000);
    }
    run.plan();
  }

  /** Two passes: one records what serving measured, the next plans with it (read back from the timings topic). */
  private void planTwice() {
    run.plan();
    run.plan();
  }

  @Test
  void shouldRestThePlanOnWhatServingMeasuredAndShareCapacityByIt() {
    twoHostsProfiledAlike();
    assertThat(partitions("host-b").getBasis()).isEqualTo("predicted");
    assertThat(capacity("host-a")).isCloseTo(100.0, offset(1e-9));
    assertThat(capacity("host-b")).isCloseTo(100.0, offset(1e-9));

    // Both serve as profiled: their plans become measured from serving
    status("host-a", 100_000, 1.0);
    status("host-b", 100_000, 1.0);
    planTwice();

    for (String host : List.of("host-a", "host-b")) {
      PartitionPlan plan = partitions(host);
      assertThat(plan.getBasis()).as(host).isEqualTo("measured");
      assertThat(plan.getMeasuredThroughput()).as(host).isCloseTo(100.0, offset(1e-6));
      assertThat(plan.getWhy()).as(host).startsWith("[1] measured from serving 100.0/s (predicted 100.0/s)");
    }
    List<TimingEvent> written = run.servingTimings().stream()
        .map(kv -> CODECS.codec(TimingEvent.class).decode(topics.profileTimings(), kv.value)).toList();
    assertThat(written).extracting(TimingEvent::getHost).containsExactly("host-a", "host-b");
    assertThat(written).allMatch(e -> e.getCondition().equals(ServedGroupings.SERVING) && e.getGrouping().equals(List.of(1)));

    // host-b's CPU is cut to a tenth: its slot's runs take ten times as long
    status("host-b", 140_000, 0.1);
    run.plan();
    assertThat(capacity("host-b")).as("cut at once, by the slot's own evidence").isCloseTo(10.0, offset(1e-6));
    run.plan();
    assertThat(partitions("host-b").getExpectedThroughput()).as("and the plan's figure follows").isCloseTo(10.0, offset(1e-6));
    assertThat(capacity("host-b")).isCloseTo(10.0, offset(1e-6));
    assertThat(capacity("host-a")).isCloseTo(100.0, offset(1e-6));

    // host-b recovers
    status("host-b", 180_000, 1.0);
    planTwice();
    assertThat(partitions("host-b").getExpectedThroughput()).isCloseTo(100.0, offset(1e-6));
    assertThat(capacity("host-b")).as("back when the evidence recovers").isCloseTo(100.0, offset(1e-6));
    assertThat(run.servingTimings()).as("one record per window that said something new").hasSize(4);

    // The same statuses again (a worker re-publishing them): nothing new is recorded, no plan record changes
    int before = run.emissions().values().stream().mapToInt(Integer::intValue).sum();
    status("host-a", 100_000, 1.0);
    status("host-b", 180_000, 1.0);
    planTwice();
    assertThat(run.servingTimings()).hasSize(4);
    assertThat(run.emissions().values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(before);
  }

  /** The slot of {@code host} reports a 30 s window ending at {@code at} in which it ran nothing. */
  private void idle(String host, long at) {
    pipe(topics.workerStatus(), host + "/cpu-0", serving(ready(host, "cpu-0", "mlp", "1", "mlp#0"), at, 30_000, 1, 0, 0), at);
  }

  @Test
  void shouldGiveACutHostItsCapacityBackOnceItsSlotStopsGettingTraffic() {
    twoHostsProfiledAlike();
    status("host-a", 100_000, 1.0);
    status("host-b", 100_000, 1.0);
    planTwice();
    // host-b's CPU is cut to a tenth: its figure and capacity fall to 10/s, so the workers' group
    // takes its partitions away and its slot serves nothing from then on
    status("host-b", 140_000, 0.1);
    planTwice();
    assertThat(partitions("host-b").getExpectedThroughput()).isCloseTo(10.0, offset(1e-6));

    // the first empty window still overlaps the cut's window: nothing yet
    idle("host-b", 160_000);
    planTwice();
    assertThat(partitions("host-b").getExpectedThroughput()).isCloseTo(10.0, offset(1e-6));
    // every later empty window (each after the one before, none with runs) brings it half way back
    double[] back = {55.0, 77.5, 88.75};
    long at = 175_000;
    for (double figure : back) {
      idle("host-b", at);
      planTwice();
      assertThat(partitions("host-b").getExpectedThroughput()).as("at %d", at).isCloseTo(figure, offset(1e-6));
      assertThat(capacity("host-b")).as("at %d", at).isCloseTo(figure, offset(1e-6));
      at += 35_000;
    }
    assertThat(capacity("host-a")).isCloseTo(100.0, offset(1e-6));
  }

  /** The slot of {@code host} reports an empty window ending at {@code at}, its worker's cost per item {@code overheadMs}. */
  private void idleWithOverhead(String host, long at, double overheadMs) {
    SlotStatus s = serving(ready(host, "cpu-0", "mlp", "1", "mlp#0"), at, 30_000, 1, 0, 0);
    s.getServing().setItemOverheadNanos(Math.round(overheadMs * 1e6));
    pipe(topics.workerStatus(), host + "/cpu-0", s, at);
  }

  /**
   * A worker's cost per item beyond the run is counted in its slot's capacity, and re-weighs it
   * when it moves with no runs at all: a host slowed, then restored, while its share was taken
   * away (so its slot serves nothing) must not keep the slow figure that keeps the traffic away.
   */
  @Test
  void shouldReweighASlotWhenItsWorkersCostPerItemMovesWithoutTraffic() {
    twoHostsProfiledAlike();
    idleWithOverhead("host-a", 100_000, 10);
    idleWithOverhead("host-b", 100_000, 10);
    run.plan();
    assertThat(capacity("host-a")).as("1 / (10 ms + 10 ms)").isCloseTo(50.0, offset(1e-6));
    assertThat(capacity("host-b")).isCloseTo(50.0, offset(1e-6));

    idleWithOverhead("host-b", 110_000, 100); // its budget cut to a tenth
    run.plan();
    assertThat(capacity("host-b")).as("1 / (10 ms + 100 ms)").isCloseTo(1 / 0.11, offset(1e-6));

    idleWithOverhead("host-b", 120_000, 10); // restored
    run.plan();
    assertThat(capacity("host-b")).isCloseTo(50.0, offset(1e-6));
    assertThat(capacity("host-a")).isCloseTo(50.0, offset(1e-6));
  }

  @Test
  void shouldHoldAPredictedHostsSlotToItsPredictionAsAMeasuredHostsToItsProfile() {
    pipe(topics.catalogModels(), "mlp/1", version("mlp", "1", "CPU"), 1000);
    pipe(topics.catalogServices(), "mlp", serviceModel("mlp", "mlp", 2), 1000);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 1, 0), 1000);
    pipe(topics.profileTimings(), "host-a-t1", timing("mlp", "1", "host-a", "cpu", 1, 10.0), 1000);
    // host-b has no timing of its own: its plan is predicted from host-a (same baseline: 10 ms a run)
    pipe(topics.hostEnvironments(), "host-b", host("host-b", 1, 0), 1000);
    run.plan();
    assertThat(partitions("host-b").getPredictedFrom()).isEqualTo("host-a");
    assertThat(capacity("host-b")).isCloseTo(100.0, offset(1e-9));

    // Both slots serve at a third of what their profiles say (a host slower under load than idle)
    status("host-a", 100_000, 1.0 / 3);
    status("host-b", 100_000, 1.0 / 3);
    run.plan();
    assertThat(partitions("host-b").getPredictedFrom()).as("still predicted: serving measures only own plans")
        .isEqualTo("host-a");
    assertThat(capacity("host-b")).as("the predicted host's slot, cut toward what it serves")
        .isCloseTo(capacity("host-a"), offset(1e-6)).isLessThan(50.0);
  }

  /** A grouping-mode measurement by the profiler on an idle host (t = 50 s). */
  private static TimingEvent idle(String host, List<Integer> sizes, double throughput) {
    return TimingEvent.newBuilder(timing("mlp", "1", host, "cpu", sizes.stream().mapToInt(Integer::intValue).sum(), 10.0))
        .setGrouping(sizes).setThroughput(throughput).setCondition("IDLE").setTimestamp(50_000).build();
  }

  @Test
  void shouldKeepTheProfilersIdleFigureBesideTheServingOneAndCompareAlternativesUnderTheSameServingCosts() {
    // 2 cores, T(1) = 10 ms, T(2) = 6 ms: [1, 1] predicted 200/s, [2] 166.7/s; the profiler measured
    // [1, 1] idle at 160/s and [2] at 116.7/s, so [1, 1] runs.
    pipe(topics.catalogModels(), "mlp/1", version("mlp", "1", "CPU"), 1000);
    pipe(topics.catalogServices(), "mlp", serviceModel("mlp", "mlp", 2), 1000);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 2, 0), 1000);
    pipe(topics.profileTimings(), "t1", timing("mlp", "1", "host-a", "cpu", 1, 10.0), 1000);
    pipe(topics.profileTimings(), "t2", timing("mlp", "1", "host-a", "cpu", 2, 6.0), 1000);
    pipe(topics.profileTimings(), "g11", idle("host-a", List.of(1, 1), 160.0), 50_000);
    pipe(topics.profileTimings(), "g2", idle("host-a", List.of(2), 116.7), 50_000);
    run.plan();
    assertThat(partitions("host-a").getSizes()).containsExactly(1, 1);
    assertThat(partitions("host-a").getWhy()).startsWith("[1, 1] measured 160.0/s");

    // Under a job both slots serve at 0.08 of the profile: [1, 1] measured from serving at 16/s, a
    // tenth of its idle 160/s (kept beside it: were it replaced, the factor would come from the
    // prediction x f(2) = 140/s instead)
    for (String slot : List.of("cpu-0", "cpu-1")) {
      SlotStatus s = serving(ready("host-a", slot, "mlp", "1", "mlp#0"), 100_000, 30_000, 1, 1000, 1000 * 10.0 / 0.08);
      pipe(topics.workerStatus(), "host-a/" + slot, s, 100_000);
    }
    planTwice();

    PartitionPlan plan = partitions("host-a");
    assertThat(plan.getSizes()).as("no switch: [2] is not better under the same serving costs").containsExactly(1, 1);
    assertThat(plan.getWhy()).startsWith(
        "[1, 1] measured from serving 16.0/s (predicted 200.0/s), ahead of [2] measured idle 116.7/s x serving 0.10 = 11.7/s");
    assertThat(run.servingTimings()).hasSize(1);
  }
}

package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.partita.avro.PartitionPlan;
import io.partita.avro.ProfileRequest;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plans that correct themselves, through the topology the planner runs: the single-size points of
 * a model on a 2-core host predict two 1-core partitions ({1,1}: 200/s against 166.7/s for {2}),
 * the planner asks the host's profiler for a grouping-mode measurement of both, the measurement
 * shows {2} better (160/s against 120/s: the two partitions slow each other down), and the next
 * plan is {2}, saying that it rests on the measurement. Asking is bounded: the same timings
 * arriving again and again never make a second request while the first is outstanding.
 */
class MeasuredChoiceTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private final Topics topics = new Topics("t");
  private final PlanSettings settings = PlanSettings.defaults(topics);
  @TempDir Path stateDir;

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void pipe(PlanRun run, String topic, String key, T value, long timestamp) {
    run.pipe(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value), timestamp);
  }

  /** Catalog, a 2-core host and the single-size points T(1) = 10 ms, T(2) = 6 ms. */
  private void given(PlanRun run, long timestamp) {
    pipe(run, topics.catalogModels(), "mlp/1", version("mlp", "1", "CPU"), timestamp);
    pipe(run, topics.catalogServices(), "mlp", serviceModel("mlp", "mlp", 1), timestamp);
    pipe(run, topics.hostEnvironments(), "host-a", host("host-a", 2, 0), timestamp);
    timings(run, timestamp);
  }

  private void timings(PlanRun run, long timestamp) {
    pipe(run, topics.profileTimings(), "p1", timing("mlp", "1", "host-a", "cpu", 1, 10.0), timestamp);
    pipe(run, topics.profileTimings(), "p2", timing("mlp", "1", "host-a", "cpu", 2, 6.0), timestamp);
  }

  private PartitionPlan partitionPlan(PlanRun run) {
    byte[] bytes = run.tables().get(PlanTable.PARTITIONS).get("mlp/1/host-a/cpu");
    return CODECS.codec(PartitionPlan.class).decode(PlanTable.PARTITIONS.topic(topics), bytes);
  }

  private List<ProfileRequest> requests(PlanRun run) {
    return run.profileRequests().stream()
        .map((KeyValue<String, byte[]> kv) -> CODECS.codec(ProfileRequest.class).decode(topics.profileRequests(), kv.value))
        .toList();
  }

  private static TimingEvent measuredGrouping(List<Integer> sizes, double throughput, double p50, String requestId) {
    return TimingEvent.newBuilder(timing("mlp", "1", "host-a", "cpu", sizes.stream().mapToInt(i -> i).sum(), p50))
        .setGrouping(sizes).setThroughput(throughput).setRequestId(requestId).setTimestamp(2000).build();
  }

  @Test
  void shouldAskForAGroupingModeMeasurementThenSwitchToTheGroupingThatMeasuredBetter() {
    try (PlanRun run = new PlanRun(settings, CODECS, stateDir)) {
      given(run, 1000);
      run.plan();

      // Given: the points predict {1,1}
      PartitionPlan predicted = partitionPlan(run);
      assertThat(predicted.getSizes()).containsExactly(1, 1);
      assertThat(predicted.getBasis()).isEqualTo("predicted");
      assertThat(predicted.getMeasuredThroughput()).isNull();
      assertThat(predicted.getWhy()).isEqualTo("[1, 1] predicted 200.0/s (not measured in grouping mode), ahead of "
          + "[2] predicted 166.7/s (not measured in grouping mode)");

      // Then the planner asks for exactly the choice and its runner-up (166.7 is within 25 % of 200)
      List<ProfileRequest> asked = requests(run);
      assertThat(asked).hasSize(1);
      ProfileRequest request = asked.get(0);
      assertThat(run.profileRequests().get(0).key).isEqualTo("host-a");
      assertThat(request.getHost()).isEqualTo("host-a");
      assertThat(request.getModel()).isEqualTo("mlp");
      assertThat(request.getVersion()).isEqualTo("1");
      assertThat(request.getGroupings()).containsExactly(List.of(1, 1), List.of(2));
      assertThat(request.getBatches()).containsExactly(1);
      assertThat(request.getProviders()).containsExactly("CPU");
      assertThat(request.getPool()).isEqualTo("cpu");
      assertThat(request.getSizes()).isEmpty();

      // When the profiler answers: together the two 1-core partitions give 120/s, one 2-core one 160/s
      pipe(run, topics.profileTimings(), "g11", measuredGrouping(List.of(1, 1), 120.0, 16.0, request.getRequestId()), 2000);
      pipe(run, topics.profileTimings(), "g2", measuredGrouping(List.of(2), 160.0, 6.2, request.getRequestId()), 2000);
      run.plan();

      // Then the plan switches to {2} and says it rests on the measurement
      PartitionPlan measured = partitionPlan(run);
      assertThat(measured.getSizes()).containsExactly(2);
      assertThat(measured.getBasis()).isEqualTo("measured");
      assertThat(measured.getMethod()).isEqualTo("measured");
      assertThat(measured.getMeasuredThroughput()).isEqualTo(160.0);
      assertThat(measured.getExpectedThroughput()).isEqualTo(160.0);
      assertThat(measured.getPredictedThroughput()).isCloseTo(1000.0 / 6, offset(1e-9));
      assertThat(measured.getWhy()).isEqualTo("[2] measured 160.0/s (predicted 166.7/s), ahead of "
          + "[1, 1] measured 120.0/s (predicted 200.0/s)");
      assertThat(measured.getRunnersUp().get(0).getSizes()).containsExactly(1, 1);
      assertThat(measured.getRunnersUp().get(0).getBasis()).isEqualTo("measured");
      assertThat(measured.getRunnersUp().get(0).getMeasuredThroughput()).isEqualTo(120.0);
      // and nothing is left to ask: both are measured
      assertThat(requests(run)).hasSize(1);
    }
  }

  @Test
  void shouldCorrectThePredictionOfUnmeasuredGroupingsByWhatMeasuredGroupingsOnTheSamePoolShowed() {
    try (PlanRun run = new PlanRun(settings.withMeasure(io.partita.planner.plan.MeasureSettings.OFF), CODECS, stateDir)) {
      pipe(run, topics.catalogModels(), "mlp/1", version("mlp", "1", "CPU"), 1000);
      pipe(run, topics.catalogServices(), "mlp", serviceModel("mlp", "mlp", 1), 1000);
      pipe(run, topics.hostEnvironments(), "host-a", host("host-a", 3, 0), 1000);
      timings(run, 1000);
      pipe(run, topics.profileTimings(), "p3", timing("mlp", "1", "host-a", "cpu", 3, 5.0), 1000);
      run.plan();
      assertThat(partitionPlan(run).getSizes()).as("predicted {1,1,1} 300/s beats {3} 200/s").containsExactly(1, 1, 1);

      // Two 1-core partitions measured together at 0.6 of their prediction: f(2) = f(3) = 0.6
      pipe(run, topics.profileTimings(), "g11", measuredGrouping(List.of(1, 1), 120.0, 16.0, null), 2000);
      run.plan();

      PartitionPlan corrected = partitionPlan(run);
      assertThat(corrected.getSizes()).containsExactly(3);
      assertThat(corrected.getBasis()).isEqualTo("predicted");
      assertThat(corrected.getMethod()).isEqualTo("corrected prediction");
      assertThat(corrected.getInterferenceFactor()).isEqualTo(1.0);
      assertThat(corrected.getExpectedThroughput()).isCloseTo(200.0, offset(1e-9));
      assertThat(corrected.getWhy()).isEqualTo("[3] predicted 200.0/s (not measured in grouping mode), ahead of "
          + "[1, 1, 1] predicted 300.0/s x interference 0.60 for 3 partitions = 180.0/s");
      assertThat(run.profileRequests()).as("asking is off").isEmpty();
    }
  }

  @Test
  void shouldNotChooseByAGroupingMeasuredWhileServingKeptTheCoresBusy() {
    io.partita.planner.metrics.PlannerMetrics metrics = io.partita.planner.metrics.PlannerMetrics.inMemory();
    try (PlanRun run = new PlanRun(settings, CODECS, stateDir, metrics)) {
      given(run, 1000);
      run.plan();
      ProfileRequest request = requests(run).get(0);

      // The profiler waited for idle slots in vain: both groupings measured with serving traffic on the cores
      pipe(run, topics.profileTimings(), "g11", TimingEvent.newBuilder(measuredGrouping(List.of(1, 1), 120.0, 16.0,
          request.getRequestId())).setCondition("BUSY_AFTER_WAIT").build(), 2000);
      pipe(run, topics.profileTimings(), "g2", TimingEvent.newBuilder(measuredGrouping(List.of(2), 160.0, 6.2,
          request.getRequestId())).setCondition("BUSY_AFTER_WAIT").build(), 2000);
      run.plan();

      assertThat(metrics.registry().get(io.partita.planner.metrics.PlannerMetrics.OUTSTANDING).gauge().value())
          .as("the busy measurements still answered the request").isZero();
      PartitionPlan plan = partitionPlan(run);
      assertThat(plan.getSizes()).as("the prediction stands: {1,1}").containsExactly(1, 1);
      assertThat(plan.getBasis()).isEqualTo("predicted");
      assertThat(plan.getMeasuredThroughput()).isNull();
      assertThat(plan.getInterferenceFactor()).as("nor learnt from").isEqualTo(1.0);
      assertThat(requests(run)).as("and not asked for again at once").hasSize(1);

      // An idle measurement of the same groupings is chosen by
      pipe(run, topics.profileTimings(), "g11", TimingEvent.newBuilder(measuredGrouping(List.of(1, 1), 120.0, 16.0, null))
          .setCondition("IDLE").setTimestamp(3000).build(), 3000);
      pipe(run, topics.profileTimings(), "g2", TimingEvent.newBuilder(measuredGrouping(List.of(2), 160.0, 6.2, null))
          .setCondition("IDLE").setTimestamp(3000).build(), 3000);
      run.plan();
      assertThat(partitionPlan(run).getSizes()).containsExactly(2);
      assertThat(partitionPlan(run).getBasis()).isEqualTo("measured");
    }
  }

  @Test
  void shouldAskAgainAfterTheBusyRetryTimeForAGroupingMeasuredBesideTraffic() {
    try (PlanRun run = new PlanRun(settings, CODECS, stateDir)) {
      given(run, 1000);
      run.plan();
      String id = requests(run).get(0).getRequestId();
      pipe(run, topics.profileTimings(), "g11", TimingEvent.newBuilder(measuredGrouping(List.of(1, 1), 120.0, 16.0, id))
          .setCondition("BUSY_AFTER_WAIT").build(), 2000);
      pipe(run, topics.profileTimings(), "g2", TimingEvent.newBuilder(measuredGrouping(List.of(2), 160.0, 6.2, id))
          .setCondition("BUSY_AFTER_WAIT").build(), 2000);
      run.plan();

      run.advanceWallClock(Duration.ofMinutes(9));
      timings(run, 3000);
      run.plan();
      assertThat(requests(run)).as("within planner.measure.busy.retry.ms (10 min)").hasSize(1);

      run.advanceWallClock(Duration.ofMinutes(2));
      timings(run, 4000);
      run.plan();
      assertThat(requests(run)).as("asked again after 10 minutes, not after the hour a failed grouping waits").hasSize(2);
      assertThat(requests(run).get(1).getGroupings()).containsExactly(List.of(1, 1), List.of(2));
    }
  }

  @Test
  void shouldNeverMakeASecondRequestWhileTheFirstIsOutstandingHoweverOftenTheSameTimingsArrive() {
    try (PlanRun run = new PlanRun(settings, CODECS, stateDir)) {
      given(run, 1000);
      run.plan();
      assertThat(requests(run)).hasSize(1);

      for (int round = 1; round <= 20; round++) {
        timings(run, 1000 + round);
        run.plan();
        // past the rate limit (60 s) but within the timeout (10 min): the first request is still outstanding
        run.advanceWallClock(Duration.ofSeconds(20));
      }

      assertThat(requests(run)).as("requests after 20 rounds of the same timings over 7 minutes").hasSize(1);
    }
  }

  @Test
  void shouldPlanWithAGroupingMeasurementWhoseMedianDidNotSettle() {
    io.partita.planner.metrics.PlannerMetrics metrics = io.partita.planner.metrics.PlannerMetrics.inMemory();
    try (PlanRun run = new PlanRun(settings, CODECS, stateDir, metrics)) {
      given(run, 1000);
      run.plan();
      String id = requests(run).get(0).getRequestId();
      // its throughput over the window is the figure; a wandering per-run median does not void it
      pipe(run, topics.profileTimings(), "g11", TimingEvent.newBuilder(measuredGrouping(List.of(1, 1), 150.0, 6.0, id))
          .setStable(false).build(), 2000);
      pipe(run, topics.profileTimings(), "g2", TimingEvent.newBuilder(measuredGrouping(List.of(2), 160.0, 6.2, id))
          .setStable(false).build(), 2000);
      run.plan();

      assertThat(partitionPlan(run).getBasis()).isEqualTo("measured");
      assertThat(partitionPlan(run).getMeasuredThroughput()).isNotNull();
    }
  }

  @Test
  void shouldNotAskAgainForAGroupingWhoseMeasurementFailedUntilTheRetryTimePassed() {
    io.partita.planner.metrics.PlannerMetrics metrics = io.partita.planner.metrics.PlannerMetrics.inMemory();
    try (PlanRun run = new PlanRun(settings, CODECS, stateDir, metrics)) {
      given(run, 1000);
      run.plan();
      String id = requests(run).get(0).getRequestId();
      // the profiler answers, but both groupings failed: nothing to plan with
      pipe(run, topics.profileTimings(), "g11", TimingEvent.newBuilder(measuredGrouping(List.of(1, 1), 0, Double.NaN, id))
          .setOk(false).setStable(false).setError("out of memory").build(), 2000);
      pipe(run, topics.profileTimings(), "g2", TimingEvent.newBuilder(measuredGrouping(List.of(2), 0, Double.NaN, id))
          .setOk(false).setStable(false).setError("session failed").build(), 2000);
      run.plan();
      assertThat(metrics.registry().get(io.partita.planner.metrics.PlannerMetrics.ANSWERED).counter().count())
          .as("both groupings answered the request, the failed one too").isEqualTo(2);
      assertThat(metrics.registry().get(io.partita.planner.metrics.PlannerMetrics.OUTSTANDING).gauge().value()).isZero();
      run.advanceWallClock(Duration.ofMinutes(30));
      timings(run, 3000);
      run.plan();

      assertThat(requests(run)).as("no loop of asking for the failed groupings within the retry time").hasSize(1);
      assertThat(partitionPlan(run).getBasis()).isEqualTo("predicted");

      run.advanceWallClock(Duration.ofMinutes(31));
      timings(run, 4000);
      run.plan();

      assertThat(requests(run)).as("asked again once planner.measure.retry.ms (1 h) passed").hasSize(2);
      assertThat(requests(run).get(1).getGroupings()).containsExactly(List.of(1, 1), List.of(2));
    }
  }
}

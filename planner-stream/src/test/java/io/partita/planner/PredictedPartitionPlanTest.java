package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.planner.plan.Keys;
import io.partita.planner.plan.PartitionPlans;
import io.partita.planner.plan.PlanInputs;
import io.partita.planner.plan.PlanSettings;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The partition plan of a host with no timings of its own (pure, {@link PartitionPlans}): made from
 * the most similar measured host's timings scaled by baseline scores, naming that host, until its
 * own timings replace it; a default placement when nobody similar measured the model.
 */
class PredictedPartitionPlanTest {
  private static final PlanSettings SETTINGS = PlanSettings.defaults(new Topics("t"));
  // host-b, the newcomer: 2 cores, half as fast as host-a by its baseline (50 against 100).
  private static final HostEnvironment HOST_A = host("host-a", 4, 0, 100);
  private static final HostEnvironment HOST_B = host("host-b", 2, 0, 50);
  // Same speed as host-b but other CPU flags: less similar than host-a, whose flags match.
  private static final HostEnvironment HOST_C = HostEnvironment.newBuilder(host("host-c", 2, 0, 50))
      .setCpuFlags(List.of("sse4")).build();
  private static final List<TimingEvent> ON_A = List.of(timing("rec", "1", "host-a", "cpu", 1, 10.0),
      timing("rec", "1", "host-a", "cpu", 2, 6.0), timing("rec", "1", "host-a", "cpu", 4, 4.0));
  private static final List<TimingEvent> ON_C = List.of(timing("rec", "1", "host-c", "cpu", 1, 3.0));
  private static final List<TimingEvent> ON_B = List.of(timing("rec", "1", "host-b", "cpu", 1, 12.0),
      timing("rec", "1", "host-b", "cpu", 2, 5.0));

  static Stream<Arguments> cases() {
    return Stream.of(
        // name, hosts, timings, predictedFrom, defaultPlan, sizes, predicted throughput, why starts with
        Arguments.of("nobody measured it: a default placement on both cores", List.of(HOST_A, HOST_B), List.of(),
            null, true, List.of(1, 1), 0.0, null),
        Arguments.of("host-a measured it: host-a's times doubled (100 / 50)", List.of(HOST_A, HOST_B), ON_A,
            "host-a", false, List.of(1, 1), 100.0,
            "predicted from host host-a's timings x baseline 100.0 / 50.0 (no timing of its own yet): [1, 1] predicted"
                + " 100.0/s (not measured in grouping mode), ahead of [2] predicted 83.3/s"),
        Arguments.of("the more similar of two measured hosts (same flags beat the same score)",
            List.of(HOST_A, HOST_B, HOST_C), concat(ON_A, ON_C), "host-a", false, List.of(1, 1), 100.0,
            "predicted from host host-a's timings"),
        Arguments.of("host-b's own timings replace the prediction", List.of(HOST_A, HOST_B), concat(ON_A, ON_B),
            null, false, List.of(2), 200.0, "[2] predicted 200.0/s"),
        Arguments.of("one own timing is enough to stop predicting", List.of(HOST_A, HOST_B),
            concat(ON_A, List.of(ON_B.get(0))), null, false, List.of(1, 1), 2 * 1000 / 12.0, "[1, 1] predicted"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void shouldPlanAHostWithoutTimingsFromTheMostSimilarMeasuredHost(String name, List<HostEnvironment> hosts,
      List<TimingEvent> timings, String predictedFrom, boolean defaultPlan, List<Integer> sizes, double throughput,
      String why) {
    PlanInputs in = inputs(Map.of("rec/1", version("rec", "1", "CPU")), hosts, timings);

    SortedMap<String, PartitionPlan> plans = PartitionPlans.partitions(in, SETTINGS, "host-b", Map.of("rec", "1"), Map.of());

    assertThat(plans).containsOnlyKeys("rec/1/host-b/cpu");
    PartitionPlan plan = plans.get("rec/1/host-b/cpu");
    assertThat(plan.getPredictedFrom()).isEqualTo(predictedFrom);
    assertThat(plan.getDefaultPlan()).isEqualTo(defaultPlan);
    assertThat(plan.getPlanned()).isTrue();
    assertThat(plan.getSizes()).isEqualTo(sizes);
    assertThat(plan.getPredictedThroughput()).isCloseTo(throughput, org.assertj.core.api.Assertions.within(1e-9));
    if (why == null) {
      assertThat(plan.getWhy()).isNull();
    } else {
      assertThat(plan.getWhy()).startsWith(why);
    }
    if (predictedFrom != null) {
      assertThat(plan.getBasis()).isEqualTo("predicted");
      assertThat(plan.getPlacement()).isEqualTo("split");
    } else {
      assertThat(plan.getWhy() == null || !plan.getWhy().startsWith("predicted from")).isTrue();
    }
  }

  @org.junit.jupiter.api.Test
  void shouldNotPredictForOrFromAHostThatPublishedNoBaselineScoreYet() {
    HostEnvironment noBaselineB = HostEnvironment.newBuilder(HOST_B).setBaseline(null).build();
    HostEnvironment noBaselineA = HostEnvironment.newBuilder(HOST_A).setBaseline(null).build();

    for (List<HostEnvironment> hosts : List.of(List.of(HOST_A, noBaselineB), List.of(noBaselineA, HOST_B))) {
      PartitionPlan plan = PartitionPlans.partitions(inputs(Map.of("rec/1", version("rec", "1", "CPU")), hosts, ON_A),
          SETTINGS, "host-b", Map.of("rec", "1"), Map.of()).get("rec/1/host-b/cpu");
      assertThat(plan.getDefaultPlan()).as("hosts %s", hosts.stream().map(h -> h.getBaseline() != null).toList()).isTrue();
      assertThat(plan.getPredictedFrom()).isNull();
    }
  }

  @org.junit.jupiter.api.Test
  void shouldNotPredictAGpuPoolFromABaselineScoreThatMeasuresTheCpu() {
    HostEnvironment gpuA = host("host-a", 4, 1, 100);
    HostEnvironment gpuB = host("host-b", 2, 1, 50);
    PlanInputs in = inputs(Map.of("g/1", version("g", "1", "CUDA")), List.of(gpuA, gpuB),
        List.of(timing("g", "1", "host-a", "gpu", 1, 2.0)));

    PartitionPlan plan = PartitionPlans.partitions(in, SETTINGS, "host-b", Map.of("g", "1"), Map.of())
        .get("g/1/host-b/gpu");

    assertThat(plan.getDefaultPlan()).isTrue();
    assertThat(plan.getPredictedFrom()).isNull();
  }

  private static List<TimingEvent> concat(List<TimingEvent> a, List<TimingEvent> b) {
    return Stream.concat(a.stream(), b.stream()).toList();
  }

  private static PlanInputs inputs(Map<String, ModelVersion> versions, List<HostEnvironment> hosts,
      List<TimingEvent> timings) {
    SortedMap<String, TimingEvent> matrix = new TreeMap<>();
    timings.forEach(t -> matrix.put(Keys.timing(t), t));
    SortedMap<String, HostEnvironment> envs = new TreeMap<>();
    hosts.forEach(h -> envs.put(h.getHostId(), h));
    SortedMap<String, ServiceModel> services = new TreeMap<>();
    versions.values().forEach(v -> services.put(v.getModel(), serviceModel(v.getModel(), v.getModel(), 1)));
    return new PlanInputs(new TreeMap<>(versions), services, envs, new TreeMap<>(), new TreeMap<>(), matrix,
        new TreeMap<>());
  }
}

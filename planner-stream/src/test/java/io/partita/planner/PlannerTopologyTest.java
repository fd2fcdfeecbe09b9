package io.partita.planner;

import static io.partita.planner.TestRecords.GIB;
import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.partita.avro.DeadLetter;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.PartitionPlan;
import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import io.partita.avro.ServiceMapping;
import io.partita.avro.SlotAssignment;
import io.partita.avro.SlotStatus;
import io.partita.avro.TimingEvent;
import io.partita.avro.TopicPartitions;
import io.partita.avro.VersionChoice;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanInputs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.plan.VersionPlans;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import io.partita.planning.ProfilePoint;
import io.partita.planning.grouping.GroupingObjective;
import io.partita.planning.grouping.ModelDemand;
import io.partita.planning.grouping.PoolSplitPlan;
import io.partita.planning.grouping.PoolSplitProblem;
import io.partita.planning.grouping.PoolSplitter;
import io.partita.planning.mapping.MappingPlan;
import io.partita.planning.mapping.MappingPlanner;
import io.partita.planning.mapping.MappingProblem;
import io.partita.planning.mapping.ResourceSpec;
import io.partita.planning.mapping.ServiceSpec;
import io.partita.planning.mapping.ServiceStage;
import io.partita.planning.version.VersionPlan;
import io.partita.planning.version.VersionSelector;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The planner topology in the test driver: inputs in, plan records out, compared with planner-core. */
class PlannerTopologyTest {
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
    run.pipe(topic, key, value == null ? null : CODECS.codec((Class<T>) value.getClass()).encode(topic, value), ts);
  }

  private <T extends SpecificRecord> T plan(PlanTable table, String key, Class<T> type) {
    byte[] bytes = run.tables().get(table).get(key);
    assertThat(bytes).as(table.id() + " " + key + " in " + run.tables().get(table).keySet()).isNotNull();
    return CODECS.codec(type).decode(table.topic(topics), bytes);
  }

  /** The slot ({@code cpu-N} of host-a) the plan gives an instance. */
  private String slotOf(String instanceId) {
    for (String key : run.tables().get(PlanTable.ASSIGNMENTS).keySet()) {
      SlotAssignment a = plan(PlanTable.ASSIGNMENTS, key, SlotAssignment.class);
      if (a.getServiceModels().stream().anyMatch(asm -> asm.getInstanceId().equals(instanceId))) {
        return a.getSlot();
      }
    }
    throw new AssertionError(instanceId + " is on no slot of " + run.tables().get(PlanTable.ASSIGNMENTS).keySet());
  }

  private void catalogOneCpuHost() {
    pipe(topics.catalogModels(), "rec/1", version("rec", "1", "CPU"), 1);
    pipe(topics.catalogServices(), "rec", serviceModel("rec", "rec", 2), 2);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 4, 0), 3);
  }

  private void timingsOnHostA() {
    pipe(topics.profileTimings(), "k1", timing("rec", "1", "host-a", "cpu", 1, 10.0), 4);
    pipe(topics.profileTimings(), "k2", timing("rec", "1", "host-a", "cpu", 2, 6.0), 5);
    pipe(topics.profileTimings(), "k4", timing("rec", "1", "host-a", "cpu", 4, 4.0), 6);
  }

  @Test
  void shouldEmitPartitionPlanEqualToPoolSplitterOnTheSameInputs() {
    catalogOneCpuHost();
    timingsOnHostA();
    run.plan();

    PoolSplitPlan expected = PoolSplitter.split(new PoolSplitProblem(4, 64 * GIB, 0, Long.MAX_VALUE,
        GroupingObjective.THROUGHPUT, List.of(new ModelDemand("rec", 0, 1, List.of(
            new ProfilePoint(1, 10.0, 1 << 20), new ProfilePoint(2, 6.0, 1 << 20), new ProfilePoint(4, 4.0, 1 << 20)),
            null))));
    PartitionPlan plan = plan(PlanTable.PARTITIONS, "rec/1/host-a/cpu", PartitionPlan.class);
    assertThat(plan.getSizes()).isEqualTo(expected.shares().get(0).plan().choice().sizes()).containsExactly(1, 1, 1, 1);
    assertThat(plan.getPredictedThroughput()).isEqualTo(expected.shares().get(0).plan().choice().throughputPerSecond());
    assertThat(plan.getRunnersUp()).hasSameSizeAs(expected.shares().get(0).plan().runnersUp());
    assertThat(plan.getMeasuredThroughput()).isNull();
    assertThat(plan.getMethod()).isEqualTo(expected.shares().get(0).plan().method());
  }

  @Test
  void shouldEmitVersionChoiceEqualToVersionSelectorOnTheSameInputs() {
    catalogOneCpuHost();
    pipe(topics.catalogModels(), "rec/2", version("rec", "2", "CPU"), 4);
    pipe(topics.profileTimings(), "a", timing("rec", "1", "host-a", "cpu", 1, 10.0), 5);
    pipe(topics.profileTimings(), "b", timing("rec", "2", "host-a", "cpu", 1, 7.0), 6);
    pipe(topics.hostEnvironments(), "host-b", host("host-b", 2, 0), 7);
    run.plan();

    VersionChoice onA = plan(PlanTable.VERSIONS, "rec/host-a", VersionChoice.class);
    VersionChoice onB = plan(PlanTable.VERSIONS, "rec/host-b", VersionChoice.class);
    PlanInputs in = inputs(Map.of("rec/1", version("rec", "1", "CPU"), "rec/2", version("rec", "2", "CPU")),
        List.of(timing("rec", "1", "host-a", "cpu", 1, 10.0), timing("rec", "2", "host-a", "cpu", 1, 7.0)));
    VersionPlan expectedB = VersionSelector.choose(VersionPlans.versionProblem(in, "rec", "host-b"));
    assertThat(onA.getChosenVersion()).isEqualTo("2");
    assertThat(onB.getChosenVersion()).isEqualTo(expectedB.chosenVersionId()).isEqualTo("2");
    assertThat(onB.getCandidates().get(0).getPredicted()).isTrue();
    assertThat(onB.getCandidates().get(0).getSourceHost()).isEqualTo("host-a");
    assertThat(onB.getCandidates().get(0).getLatencyMs()).isEqualTo(expectedB.outcomes().get(0).latencyMs());
  }

  private PlanInputs inputs(Map<String, io.partita.avro.ModelVersion> versions, List<TimingEvent> timings) {
    SortedMap<String, TimingEvent> matrix = new TreeMap<>();
    timings.forEach(t -> matrix.put(io.partita.planner.plan.Keys.timing(t), t));
    return new PlanInputs(new TreeMap<>(versions), new TreeMap<>(Map.of("rec", serviceModel("rec", "rec", 2))),
        new TreeMap<>(Map.of("host-a", host("host-a", 4, 0), "host-b", host("host-b", 2, 0))), new TreeMap<>(),
        new TreeMap<>(), matrix, new TreeMap<>());
  }

  /** Two models, each its own service, timed on the CPU and the GPU of one host (det is far faster on the GPU). */
  private void detAndRecOnAGpuHost() {
    pipe(topics.catalogModels(), "det/1", version("det", "1", "CPU"), 1);
    pipe(topics.catalogModels(), "rec/1", version("rec", "1", "CPU"), 1);
    pipe(topics.catalogServices(), "det", serviceModel("det", "det", 1), 2);
    pipe(topics.catalogServices(), "rec", serviceModel("rec", "rec", 1), 2);
    pipe(topics.hostEnvironments(), "host-g", host("host-g", 4, 1), 3);
    pipe(topics.profileTimings(), "1", timing("det", "1", "host-g", "gpu", 1, 2.0), 4);
    pipe(topics.profileTimings(), "2", timing("det", "1", "host-g", "cpu", 4, 40.0), 4);
    pipe(topics.profileTimings(), "3", timing("rec", "1", "host-g", "gpu", 1, 3.0), 4);
    pipe(topics.profileTimings(), "4", timing("rec", "1", "host-g", "cpu", 4, 3.5), 4);
  }

  @Test
  void shouldMapModelsToTheKindOfHardwareAsMappingPlannerDoesAndPartitionOnlyThatPool() {
    detAndRecOnAGpuHost();
    run.plan();

    MappingPlan expected = MappingPlanner.plan(new MappingProblem(
        List.of(new ResourceSpec("host-g/cpu", "cpu"), new ResourceSpec("host-g/gpu", "gpu")),
        Map.of("det", Map.of("host-g/gpu", 2.0, "host-g/cpu", 40.0), "rec", Map.of("host-g/gpu", 3.0, "host-g/cpu", 3.5)),
        List.of(new ServiceSpec("det", List.of(new ServiceStage("det", 1.0))),
            new ServiceSpec("rec", List.of(new ServiceStage("rec", 1.0))))));
    for (String service : List.of("det", "rec")) {
      ServiceMapping mapping = plan(PlanTable.MAPPINGS, service, ServiceMapping.class);
      String resource = expected.assignments().stream().filter(a -> a.serviceId().equals(service)).findFirst()
          .orElseThrow().resourceId();
      assertThat(mapping.getPlanned()).isTrue();
      assertThat(mapping.getAssignments()).singleElement().satisfies(a -> assertThat(a.getResource()).isEqualTo(resource));
      assertThat(mapping.getCostMsPerSecond()).isEqualTo(expected.costMsPerSecond());
      String pool = resource.substring(resource.indexOf('/') + 1);
      assertThat(run.tables().get(PlanTable.PARTITIONS)).containsKey(service + "/1/host-g/" + pool)
          .doesNotContainKey(service + "/1/host-g/" + (pool.equals("gpu") ? "cpu" : "gpu"));
    }
  }

  /**
   * The running mapping stands while every figure of the mapping problem stays within {@code
   * planner.mapping.drift} (1 %) of the problem it was planned on: a time 0.5 % slower leaves the
   * records as they were (a fresh plan would restate its cost), one 5 % slower plans afresh.
   */
  @Test
  void shouldKeepTheMappingWhileTheProblemStaysWithinTheDriftOfTheOneItWasPlannedOn() {
    detAndRecOnAGpuHost();
    run.plan();
    byte[] planned = run.tables().get(PlanTable.MAPPINGS).get("det");
    assertThat(planned).isNotNull();

    pipe(topics.profileTimings(), "1", timing("det", "1", "host-g", "gpu", 1, 2.01), 5);
    run.plan();

    assertThat(run.tables().get(PlanTable.MAPPINGS).get("det")).as("det's mapping after a time 0.5 % slower")
        .isEqualTo(planned);

    pipe(topics.profileTimings(), "1", timing("det", "1", "host-g", "gpu", 1, 2.1), 6);
    run.plan();

    ServiceMapping after = plan(PlanTable.MAPPINGS, "det", ServiceMapping.class);
    MappingPlan expected = MappingPlanner.plan(new MappingProblem(
        List.of(new ResourceSpec("host-g/cpu", "cpu"), new ResourceSpec("host-g/gpu", "gpu")),
        Map.of("det", Map.of("host-g/gpu", 2.1, "host-g/cpu", 40.0), "rec", Map.of("host-g/gpu", 3.0, "host-g/cpu", 3.5)),
        List.of(new ServiceSpec("det", List.of(new ServiceStage("det", 1.0))),
            new ServiceSpec("rec", List.of(new ServiceStage("rec", 1.0))))));
    assertThat(after.getCostMsPerSecond()).as("det's mapping after a time 5 % slower, planned afresh")
        .isEqualTo(expected.costMsPerSecond());
    assertThat(after.getAssignments()).singleElement().satisfies(a -> assertThat(a.getLatencyMs()).isEqualTo(2.1));
  }

  @Test
  void shouldAssignSlotsAndRouteOnlyToInstancesTheWorkerReportsReady() {
    catalogOneCpuHost();
    timingsOnHostA();
    run.plan();

    SortedMap<String, byte[]> slots = run.tables().get(PlanTable.ASSIGNMENTS);
    assertThat(slots.keySet()).containsExactly("host-a/cpu-0", "host-a/cpu-1", "host-a/cpu-2", "host-a/cpu-3");
    String at0 = slotOf("rec#0");
    String at1 = slotOf("rec#1");
    assertThat(at0).isNotEqualTo(at1);
    SlotAssignment first = plan(PlanTable.ASSIGNMENTS, "host-a/" + at0, SlotAssignment.class);
    assertThat(first.getCpus()).containsExactly(Integer.parseInt(at0.substring("cpu-".length())));
    assertThat(first.getThreads()).isEqualTo(1);
    assertThat(first.getServiceModels()).singleElement()
        .satisfies(s -> assertThat(s.getInstanceId()).isEqualTo("rec#0"));
    Route route = plan(PlanTable.ROUTES, "rec", Route.class);
    // the two planned instances keep its weight file mounted; every other slot of its base model serves it too
    List<String> onDemand = new ArrayList<>();
    for (String key : slots.keySet()) {
      if (!key.endsWith("/" + at0) && !key.endsWith("/" + at1)) {
        onDemand.add(key + "/rec");
      }
    }
    assertThat(route.getInstances()).extracting(RouteInstance::getInstanceId).hasSize(4).startsWith("rec#0", "rec#1")
        .containsAll(onDemand);
    assertThat(route.getReadyInstances()).isZero();
    assertThat(route.getRequestTopic()).isEqualTo(topics.requests("rec"));

    pipe(topics.workerStatus(), "host-a/" + at0, TestRecords.ready("host-a", at0, "rec", "1", "rec#0"), 10);
    run.plan();

    Route after = plan(PlanTable.ROUTES, "rec", Route.class);
    assertThat(after.getReadyInstances()).isEqualTo(1);
    assertThat(after.getInstances().get(0).getReady()).isTrue();
    assertThat(after.getInstances().get(0).getPartitions()).isEmpty();
    assertThat(after.getInstances().get(1).getReason()).contains("no status");
  }

  @Test
  void shouldCountEverySlotOfTheBaseModelInTheRouteAndItsReadiness() {
    pipe(topics.catalogModels(), "rec/1", version("rec", "1", "CPU"), 1);
    pipe(topics.catalogServices(), "rec", serviceModel("rec", "rec", 1), 2); // instances: 1 slot keeps it mounted
    pipe(topics.catalogServices(), "rec-legal", TestRecords.adapterModel("rec-legal", "rec", 1), 3);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 4, 0), 4);
    timingsOnHostA();
    run.plan();
    List<SlotAssignment> slots = run.tables().get(PlanTable.ASSIGNMENTS).keySet().stream()
        .map(k -> plan(PlanTable.ASSIGNMENTS, k, SlotAssignment.class)).toList();
    assertThat(slots).hasSizeGreaterThan(2);
    Route legal = plan(PlanTable.ROUTES, "rec-legal", Route.class);
    assertThat(legal.getInstances()).hasSize(slots.size()).filteredOn(i -> i.getInstanceId().contains("#")).hasSize(1);
    // a slot the plan gave no instance at all
    String other = slots.stream().filter(a -> a.getServiceModels().isEmpty()).map(SlotAssignment::getSlot).findFirst().orElseThrow();

    // Only a slot the plan gave no instance of rec-legal reports in, and it has not mounted rec-legal: ready all the same.
    pipe(topics.workerStatus(), "host-a/" + other, TestRecords.ready("host-a", other, "rec", "1"), 10);
    run.plan();
    Route route = plan(PlanTable.ROUTES, "rec-legal", Route.class);
    assertThat(route.getReadyInstances()).isEqualTo(1);
    assertThat(route.getInstances()).filteredOn(RouteInstance::getReady).singleElement().satisfies(i -> {
      assertThat(i.getInstanceId()).isEqualTo("host-a/" + other + "/rec-legal");
      assertThat(i.getSlot()).isEqualTo(other);
    });
    assertThat(route.getInstances()).filteredOn(i -> !i.getReady()).allSatisfy(i -> assertThat(i.getReason()).contains("no status"));

    // Its on-demand mount of rec-legal failed there: that slot does not count for rec-legal, nor its planned one without a status.
    SlotStatus failed = SlotStatus.newBuilder(TestRecords.ready("host-a", other, "rec", "1")).setServiceModels(List.of(
        io.partita.avro.MountStatus.newBuilder().setServiceModel("rec-legal").setInstanceId("host-a/" + other + "/rec-legal")
            .setWeightFile("rec/legal.onnx_adapter").setSha256("0".repeat(64)).setState("NOT_READY").setReason("sha256 differs")
            .setBytes(0).setLastUsed(0).build())).build();
    pipe(topics.workerStatus(), "host-a/" + other, failed, 11);
    run.plan();
    Route refused = plan(PlanTable.ROUTES, "rec-legal", Route.class);
    assertThat(refused.getReadyInstances()).isZero();
    assertThat(refused.getInstances()).filteredOn(i -> i.getSlot().equals(other)).singleElement()
        .satisfies(i -> assertThat(i.getReason()).contains("sha256 differs"));
    assertThat(plan(PlanTable.ROUTES, "rec", Route.class).getReadyInstances()).as("rec itself is served there").isEqualTo(1);
  }

  @Test
  void shouldGiveEachSlotItsShareOfThePlannedThroughputAndADefaultPlacementNone() {
    catalogOneCpuHost();
    // host-b has no timing of its own: its plan is predicted from host-a's (same baseline score)
    pipe(topics.hostEnvironments(), "host-b", host("host-b", 2, 0), 4);
    // host-c has no timing and no baseline score yet: a default placement, whose capacity nobody knows
    pipe(topics.hostEnvironments(), "host-c", HostEnvironment.newBuilder(host("host-c", 2, 0)).setBaseline(null).build(), 5);
    timingsOnHostA();
    run.plan();

    for (String host : List.of("host-a", "host-b")) {
      PartitionPlan p = plan(PlanTable.PARTITIONS, "rec/1/" + host + "/cpu", PartitionPlan.class);
      int slots = p.getSizes().size();
      double sum = 0;
      for (int n = 0; n < slots; n++) {
        SlotAssignment a = plan(PlanTable.ASSIGNMENTS, host + "/cpu-" + n, SlotAssignment.class);
        assertThat(a.getCapacity()).as(host + " cpu-" + n).isCloseTo(p.getExpectedThroughput() / slots, within(1e-9));
        sum += a.getCapacity();
      }
      assertThat(sum).as(host).isCloseTo(p.getExpectedThroughput(), within(1e-6)).isPositive();
    }
    assertThat(run.tables().get(PlanTable.ASSIGNMENTS).keySet()).anyMatch(k -> k.startsWith("host-c/"));
    run.tables().get(PlanTable.ASSIGNMENTS).forEach((key, bytes) -> {
      if (key.startsWith("host-c/")) {
        assertThat(CODECS.codec(SlotAssignment.class).decode(topics.planAssignments(), bytes).getCapacity()).isZero();
      }
    });
  }

  @Test
  void shouldCarryEachInstancesRequestPartitionsAndLoadIntoTheRoute() {
    catalogOneCpuHost();
    timingsOnHostA();
    run.plan();
    String recTopic = topics.requests("rec");
    String at0 = slotOf("rec#0");
    String at1 = slotOf("rec#1");
    // unordered, duplicated and split over two entries; another topic's partitions are not the route's
    SlotStatus busy = TestRecords.withLoad(TestRecords.ready("host-a", at0, "rec", "1", "rec#0"), 3, 7,
        new TopicPartitions(recTopic, List.of(4, 0)), new TopicPartitions(topics.requests("other"), List.of(1)),
        new TopicPartitions(recTopic, List.of(2, 0)));
    pipe(topics.workerStatus(), "host-a/" + at0, busy, 10);
    pipe(topics.workerStatus(), "host-a/" + at1, TestRecords.withLoad(
        TestRecords.ready("host-a", at1, "rec", "1", "rec#1"), 0, 1, new TopicPartitions(recTopic, List.of(1, 3))), 11);
    run.plan();

    Route route = plan(PlanTable.ROUTES, "rec", Route.class);
    assertThat(route.getReadyInstances()).isEqualTo(2);
    RouteInstance first = route.getInstances().get(0);
    assertThat(first.getInstanceId()).isEqualTo("rec#0");
    assertThat(first.getPartitions()).containsExactly(0, 2, 4);
    assertThat(first.getInFlight()).isEqualTo(3);
    assertThat(first.getQueueDepth()).isEqualTo(7);
    assertThat(first.getVersion()).as("the version its slot is assigned: a pinned call goes to its partitions").isEqualTo("1");
    RouteInstance second = route.getInstances().get(1);
    assertThat(second.getInstanceId()).isEqualTo("rec#1");
    assertThat(second.getPartitions()).containsExactly(1, 3);
    assertThat(second.getInFlight()).isZero();
    assertThat(second.getQueueDepth()).isEqualTo(1);

    // the load changes: the route follows it (its bytes changed, so it is written again)
    pipe(topics.workerStatus(), "host-a/" + at0, TestRecords.withLoad(
        TestRecords.ready("host-a", at0, "rec", "1", "rec#0"), 0, 0, new TopicPartitions(recTopic, List.of(0, 2, 4))), 12);
    run.plan();
    RouteInstance idle = plan(PlanTable.ROUTES, "rec", Route.class).getInstances().get(0);
    assertThat(idle.getPartitions()).containsExactly(0, 2, 4);
    assertThat(idle.getInFlight()).isZero();
    assertThat(idle.getQueueDepth()).isZero();
  }

  @Test
  void shouldKeepAMovedInstanceReadyWhileAnotherSlotOfItsHostStillServesIt() {
    catalogOneCpuHost();
    timingsOnHostA();
    run.plan();
    String recTopic = topics.requests("rec");
    // The worker still runs an earlier grouping: one slot the plan gives no instance reports both.
    List<String> free = new ArrayList<>(List.of("cpu-0", "cpu-1", "cpu-2", "cpu-3"));
    free.removeAll(List.of(slotOf("rec#0"), slotOf("rec#1")));
    String old = free.get(0);
    pipe(topics.workerStatus(), "host-a/" + old, TestRecords.withLoad(TestRecords.ready("host-a", old, "rec", "1", "rec#0", "rec#1"),
        2, 5, new TopicPartitions(recTopic, List.of(0, 1))), 10);
    run.plan();

    Route route = plan(PlanTable.ROUTES, "rec", Route.class);
    List<RouteInstance> plannedInstances = route.getInstances().stream().filter(i -> i.getInstanceId().contains("#")).toList();
    assertThat(plannedInstances).hasSize(2).allMatch(RouteInstance::getReady);
    for (RouteInstance i : plannedInstances) {
      assertThat(i.getSlot()).as("the slot the plan assigns").isNotEqualTo(old);
      assertThat(i.getPartitions()).containsExactly(0, 1);
      assertThat(i.getInFlight()).isEqualTo(2);
    }
    // the old slot itself is a slot of the base model that reports in: it serves rec too
    assertThat(route.getReadyInstances()).isEqualTo(3);

    // The old slot stops reporting rec#1 and no other slot has it: not ready, with the assigned slot's reason.
    pipe(topics.workerStatus(), "host-a/" + old, TestRecords.ready("host-a", old, "rec", "1", "rec#0"), 11);
    run.plan();
    Route after = plan(PlanTable.ROUTES, "rec", Route.class);
    assertThat(after.getReadyInstances()).isEqualTo(2);
    assertThat(after.getInstances().get(1).getReady()).isFalse();
    assertThat(after.getInstances().get(1).getReason()).contains("no status");

    // Another host's slot reporting rec#1 does not count.
    pipe(topics.workerStatus(), "host-b/cpu-0", TestRecords.ready("host-b", "cpu-0", "rec", "1", "rec#1"), 13);
    run.plan();
    assertThat(plan(PlanTable.ROUTES, "rec", Route.class).getReadyInstances()).isEqualTo(2);
  }

  @Test
  void shouldNotReEmitPlansWhoseBytesDidNotChange() {
    catalogOneCpuHost();
    timingsOnHostA();
    run.plan();
    Map<PlanTable, Integer> before = run.emissions();

    pipe(topics.profileTimings(), "k2", timing("rec", "1", "host-a", "cpu", 2, 6.0), 20);
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 4, 0), 21);
    run.plan();

    assertThat(before.get(PlanTable.PARTITIONS)).isEqualTo(1);
    assertThat(run.emissions()).isEqualTo(before);
  }

  @Test
  void shouldRePlanWhenANewTimingChangesTheBestGrouping() {
    catalogOneCpuHost();
    timingsOnHostA();
    run.plan();
    TimingEvent faster = TimingEvent.newBuilder(timing("rec", "1", "host-a", "cpu", 4, 1.0)).setTimestamp(2000).build();
    pipe(topics.profileTimings(), "k4", faster, 30);
    run.plan();

    assertThat(plan(PlanTable.PARTITIONS, "rec/1/host-a/cpu", PartitionPlan.class).getSizes()).containsExactly(4);
    assertThat(run.tables().get(PlanTable.ASSIGNMENTS).keySet()).containsExactly("host-a/cpu-0");
    assertThat(plan(PlanTable.ASSIGNMENTS, "host-a/cpu-0", SlotAssignment.class).getCpus()).containsExactly(0, 1, 2, 3);
  }

  @Test
  void shouldShowMeasuredThroughputBesideThePredictionWhenTheGroupingWasMeasured() {
    catalogOneCpuHost();
    timingsOnHostA();
    TimingEvent grouping = TimingEvent.newBuilder(timing("rec", "1", "host-a", "cpu", 4, 11.0))
        .setGrouping(List.of(1, 1, 1, 1)).setThroughput(371.5).build();
    pipe(topics.profileTimings(), "g", grouping, 7);
    run.plan();

    PartitionPlan plan = plan(PlanTable.PARTITIONS, "rec/1/host-a/cpu", PartitionPlan.class);
    assertThat(plan.getPredictedThroughput()).isEqualTo(400.0);
    assertThat(plan.getMeasuredThroughput()).isEqualTo(371.5);
  }

  @Test
  void shouldWithdrawThePlansOfAHostWhoseWorkerLeftAndPlanItAgainWhenItIsBack() {
    catalogOneCpuHost();
    pipe(topics.hostEnvironments(), "host-b", host("host-b", 2, 0), 4);
    timingsOnHostA();
    run.plan();
    assertThat(run.tables().get(PlanTable.ASSIGNMENTS).keySet()).anyMatch(k -> k.startsWith("host-b/"));

    pipe(topics.hostLiveness(), "host-b", new HostLiveness("host-b", "LEFT", "gone", 0L), 20);
    run.plan();
    assertThat(run.tables().get(PlanTable.ASSIGNMENTS).keySet()).noneMatch(k -> k.startsWith("host-b/"))
        .anyMatch(k -> k.startsWith("host-a/"));
    assertThat(run.tables().get(PlanTable.PARTITIONS).keySet()).noneMatch(k -> k.endsWith("/host-b/cpu"));
    // every instance of the service model is on host-a now
    assertThat(plan(PlanTable.ROUTES, "rec", Route.class).getInstances()).isNotEmpty()
        .allSatisfy(i -> assertThat(i.getHost()).isEqualTo("host-a"));

    pipe(topics.hostLiveness(), "host-b", new HostLiveness("host-b", "PRESENT", "back", 0L), 30);
    run.plan();
    assertThat(run.tables().get(PlanTable.ASSIGNMENTS).keySet()).anyMatch(k -> k.startsWith("host-b/"));
  }

  @Test
  void shouldDeadLetterALivenessRecordOfAnUnknownState() {
    catalogOneCpuHost();
    pipe(topics.hostLiveness(), "host-a", new HostLiveness("host-a", "SLEEPING", null, 0L), 4);
    run.plan();

    assertThat(run.deadLetters()).singleElement().satisfies(kv -> assertThat(
        CODECS.codec(DeadLetter.class).decode(topics.deadLetter(), kv.value).getError()).contains("state: 'SLEEPING'"));
    assertThat(run.tables().get(PlanTable.ASSIGNMENTS).keySet()).anyMatch(k -> k.startsWith("host-a/"));
  }

  @Test
  void shouldPlanWithTimingsThatArrivedBeforeTheirModelVersionWasInTheCatalog() {
    // Given: a profiler that measured before the planner's catalog record landed (processes starting together)
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 4, 0), 1);
    timingsOnHostA();
    run.plan();
    assertThat(run.deadLetters()).as("timings of a model version the catalog does not name yet").isEmpty();
    assertThat(run.tables().get(PlanTable.PARTITIONS)).doesNotContainKey("rec/1/host-a/cpu");

    // When: the catalog names the model version
    pipe(topics.catalogModels(), "rec/1", version("rec", "1", "CPU"), 7);
    pipe(topics.catalogServices(), "rec", serviceModel("rec", "rec", 2), 8);
    run.plan();

    // Then: the host is planned from its own timings, not a default or a prediction
    PartitionPlan p = plan(PlanTable.PARTITIONS, "rec/1/host-a/cpu", PartitionPlan.class);
    assertThat(p.getDefaultPlan()).isFalse();
    assertThat(p.getPredictedFrom()).isNull();
    assertThat(p.getPlanned()).isTrue();
  }

  @Test
  void shouldDeadLetterPoisonRecordsWithTheReasonAndKeepPlanning() {
    catalogOneCpuHost();
    run.pipe(topics.profileTimings(), "garbage", new byte[] {1, 2, 3}, 4);
    pipe(topics.profileTimings(), "negative", timing("rec", "1", "host-a", "cpu", 1, -3.0), 5);
    timingsOnHostA();
    run.plan();

    List<KeyValue<String, byte[]>> letters = run.deadLetters();
    assertThat(letters).extracting(kv -> kv.key).containsExactly("garbage", "negative");
    List<DeadLetter> decoded = letters.stream()
        .map(kv -> CODECS.codec(DeadLetter.class).decode(topics.deadLetter(), kv.value)).toList();
    assertThat(decoded.get(0).getErrorClass()).isEqualTo("DecodeException");
    assertThat(decoded.get(1).getError()).contains("p50Ms").contains("negative time");
    assertThat(decoded).allSatisfy(d -> {
      assertThat(d.getTopic()).isEqualTo(topics.profileTimings());
      assertThat(d.getComponent()).isEqualTo("planner");
    });
    assertThat(decoded.get(1).getOffset()).isEqualTo(1);
    assertThat(run.tables().get(PlanTable.PARTITIONS)).containsKey("rec/1/host-a/cpu");
  }

  @Test
  void shouldTombstoneThePlansOfAHostAndAServiceModelThatWereDeleted() {
    catalogOneCpuHost();
    timingsOnHostA();
    run.plan();
    assertThat(run.tables().get(PlanTable.ROUTES)).containsOnlyKeys("rec");

    pipe(topics.hostEnvironments(), "host-a", null, 40);
    pipe(topics.catalogServices(), "rec", null, 41);
    run.plan();

    assertThat(run.tables().get(PlanTable.VERSIONS)).isEmpty();
    assertThat(run.tables().get(PlanTable.PARTITIONS)).isEmpty();
    assertThat(run.tables().get(PlanTable.ASSIGNMENTS)).isEmpty();
    assertThat(run.tables().get(PlanTable.ROUTES)).isEmpty();
    assertThat(run.deadLetters()).isEmpty();
  }

  @Test
  void shouldNameEveryNodeAndStore() {
    String description = PlannerTopology.build(settings, CODECS, PlanRun.DEBOUNCE).describe().toString();
    assertThat(description).doesNotContain("KSTREAM-").doesNotContain("KTABLE-")
        .contains("fold-timings", "plan-changes", "timings-store", "plans-store", "write-dead-letters");
  }
}

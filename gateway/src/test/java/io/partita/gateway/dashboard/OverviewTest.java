package io.partita.gateway.dashboard;

import static io.partita.gateway.dashboard.DashboardRecords.instance;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.partita.avro.PartitionPlan;
import io.partita.avro.SlotAssignment;
import io.partita.avro.VersionChoice;
import io.partita.common.Topics;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

/** The overview from records fed straight into the dashboard's state: no broker. */
class OverviewTest {
  private static final long NOW = 1_800_000_000_000L;
  private static final Views.Viewer EVERYONE = new Views.Viewer(m -> true, true);

  private final Topics topics = new Topics("ov");
  private final DashboardState state = new DashboardState(topics, DashboardRecords.CODECS, 3);
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Traffic traffic = new Traffic(registry, 10, 60);
  private final Overview overview = new Overview(state, traffic, Set.of("demo", "demo-a"), 10, 300);
  private long offset;

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void put(String topic, String key, T value, long timestamp) {
    state.apply(topic, key, DashboardRecords.CODECS.codec((Class<T>) value.getClass()).encode(topic, value), offset++, timestamp);
  }

  private <T extends SpecificRecord> void put(String topic, String key, T value) {
    put(topic, key, value, NOW);
  }

  private JsonNode model(JsonNode overview, String name) {
    for (JsonNode m : overview.get("models")) {
      if (m.get("model").asText().equals(name)) {
        return m;
      }
    }
    throw new AssertionError("no model " + name + " in " + overview);
  }

  private void twoSlotsOnHostA() {
    put(topics.hostEnvironments(), "host-a", DashboardRecords.host("host-a", 4));
    put(topics.planAssignments(), "host-a/cpu-0", DashboardRecords.slot("host-a", "cpu-0", List.of(0, 1), "demo"));
    put(topics.planAssignments(), "host-a/cpu-2", DashboardRecords.slot("host-a", "cpu-2", List.of(2, 3), "demo-a"));
    put(topics.profileTimings(), "t", DashboardRecords.timing("host-a", "1", 2, 1, 2.0));
  }

  @Test
  void shouldCallAModelReadyWhenEveryPlannedInstanceIsReadyAndSayWhereItRuns() {
    twoSlotsOnHostA();
    put(topics.planRoutes(), "demo", DashboardRecords.route("demo", topics.requests("demo-mlp"), instance("demo", 0, "host-a", "cpu-0", null)));

    JsonNode demo = model(overview.build(EVERYONE, NOW), "demo");

    assertThat(demo.get("state").asText()).isEqualTo(Overview.READY);
    assertThat(demo.get("readyInstances").asInt()).isEqualTo(1);
    assertThat(demo.get("plannedInstances").asInt()).isEqualTo(1);
    assertThat(demo.get("reason").isNull()).isTrue();
    assertThat(demo.get("baseModel").asText()).as("from the slot serving it").isEqualTo("demo-mlp");
    JsonNode where = demo.get("where").get(0);
    assertThat(where.get("host").asText()).isEqualTo("host-a");
    assertThat(where.get("slots")).extracting(JsonNode::asText).containsExactly("cpu-0");
    assertThat(where.get("versions")).extracting(JsonNode::asText).containsExactly("1");
    assertThat(where.get("hostLeft").asBoolean()).isFalse();
  }

  @Test
  void shouldSayWhichInstancesAreNotReadyAndWhy() {
    twoSlotsOnHostA();
    SlotAssignment hostB = DashboardRecords.slot("host-b", "cpu-0", List.of(0), "demo");
    hostB.getServiceModels().get(0).setInstanceId("demo#1");
    put(topics.planAssignments(), "host-b/cpu-0", hostB);
    put(topics.planRoutes(), "demo", DashboardRecords.route("demo", topics.requests("demo-mlp"),
        instance("demo", 0, "host-a", "cpu-0", null), instance("demo", 1, "host-b", "cpu-0", "host-b/cpu-0 is STARTING")));
    put(topics.planRoutes(), "demo-a", DashboardRecords.route("demo-a", topics.requests("demo-mlp"),
        instance("demo-a", 0, "host-a", "cpu-2", "no status from host-a/cpu-2 yet")));
    put(topics.hostLiveness(), "host-b", DashboardRecords.liveness("host-b", "LEFT"));

    JsonNode out = overview.build(EVERYONE, NOW);

    JsonNode demo = model(out, "demo");
    assertThat(demo.get("state").asText()).isEqualTo(Overview.PARTLY_READY);
    assertThat(demo.get("readyInstances").asInt()).isEqualTo(1);
    assertThat(demo.get("plannedInstances").asInt()).isEqualTo(2);
    assertThat(demo.get("reason").asText()).isEqualTo("host-b/cpu-0 is STARTING");
    assertThat(demo.get("where")).extracting(w -> w.get("host").asText()).containsExactly("host-a", "host-b");
    assertThat(demo.get("where").get(1).get("hostLeft").asBoolean()).isTrue();
    JsonNode demoA = model(out, "demo-a");
    assertThat(demoA.get("state").asText()).isEqualTo(Overview.NOT_READY);
    assertThat(demoA.get("reason").asText()).isEqualTo("no status from host-a/cpu-2 yet");
    JsonNode summary = out.get("summary");
    assertThat(summary.get("hosts").asInt()).as("host-b is in the plan, though it never reported").isEqualTo(2);
    assertThat(summary.get("hostsLeft")).extracting(JsonNode::asText).containsExactly("host-b");
    assertThat(summary.get("slots").asInt()).isEqualTo(3);
    assertThat(summary.get("slotsReady").asInt()).as("only host-a/cpu-0 has all its instances ready").isEqualTo(1);
    assertThat(summary.get("models").asInt()).isEqualTo(2);
    assertThat(summary.get("modelsReady").asInt()).isZero();
  }

  @Test
  void shouldSayWhyNothingIsPlannedInTheOrderANewcomerWouldCheck() {
    assertThat(model(overview.build(EVERYONE, NOW), "demo").get("reason").asText())
        .isEqualTo("the planner has published no route for it yet (is the planner running?)");

    put(topics.catalogServices(), "demo", DashboardRecords.catalog("demo", "demo-mlp", 1));
    put(topics.planRoutes(), "demo", DashboardRecords.route("demo", topics.requests("demo-mlp")));
    assertThat(model(overview.build(EVERYONE, NOW), "demo").get("reason").asText())
        .isEqualTo("no host has reported yet (each host's profiler publishes its environment)");

    put(topics.hostEnvironments(), "host-a", DashboardRecords.host("host-a", 4));
    assertThat(model(overview.build(EVERYONE, NOW), "demo").get("reason").asText())
        .isEqualTo("no host has measured demo-mlp yet (the profiler measures it, then the planner places it)");

    put(topics.profileTimings(), "t", DashboardRecords.timing("host-a", "1", 2, 1, 2.0));
    assertThat(model(overview.build(EVERYONE, NOW), "demo").get("reason").asText())
        .isEqualTo("the planner placed no instance of it");

    put(topics.planVersions(), "demo-mlp/host-a", VersionChoice.newBuilder().setModel("demo-mlp").setHost("host-a")
        .setChosenVersion(null).setNoChoiceReason("no version meets the latency objective of 1 ms").setCandidates(List.of()).build());
    PartitionPlan none = PartitionPlan.newBuilder(DashboardRecords.partitions("host-a")).setPlanned(false).setSizes(List.of())
        .setNoEligibleReason("no grouping fits in 64 MiB").build();
    put(topics.planPartitions(), "demo-mlp/1/host-a/cpu", none);
    JsonNode demo = model(overview.build(EVERYONE, NOW), "demo");
    assertThat(demo.get("state").asText()).isEqualTo(Overview.NOT_READY);
    assertThat(demo.get("plannedInstances").asInt()).isZero();
    assertThat(demo.get("reason").asText()).isEqualTo(
        "host-a: no version meets the latency objective of 1 ms; host-a: no grouping fits in 64 MiB");
  }

  @Test
  void shouldSayWhenFewerInstancesArePlannedThanTheCatalogWants() {
    twoSlotsOnHostA();
    put(topics.catalogServices(), "demo", DashboardRecords.catalog("demo", "demo-mlp", 3));
    put(topics.planRoutes(), "demo", DashboardRecords.route("demo", topics.requests("demo-mlp"), instance("demo", 0, "host-a", "cpu-0", null)));

    JsonNode demo = model(overview.build(EVERYONE, NOW), "demo");

    assertThat(demo.get("state").asText()).as("it answers").isEqualTo(Overview.READY);
    assertThat(demo.get("wantedInstances").asInt()).isEqualTo(3);
    assertThat(demo.get("reason").asText()).isEqualTo("only 1 of the 3 instances wanted are planned");
  }

  @Test
  void shouldShowTheWindowsTrafficPerModelAndInTheSummary() {
    traffic.sample(Set.of("demo", "demo-a"), NOW - 2000);
    for (int i = 0; i < 19; i++) {
      call("demo", "ok", 3);
    }
    call("demo", "deadline", 40);
    call("demo-a", "ok", 3);
    traffic.sample(Set.of("demo", "demo-a"), NOW);

    JsonNode out = overview.build(EVERYONE, NOW);

    JsonNode demo = model(out, "demo");
    assertThat(demo.get("rate").asDouble()).isEqualTo(10.0); // 20 calls in 2 s
    assertThat(demo.get("requestsInWindow").asLong()).isEqualTo(20);
    assertThat(demo.get("errorsInWindow").asLong()).isEqualTo(1);
    assertThat(demo.get("p50Ms").asDouble()).isBetween(3.0, 6.0);
    assertThat(demo.get("p99Ms").asDouble()).isBetween(40.0, 80.0);
    assertThat(out.get("summary").get("requestsPerSecond").asDouble()).isEqualTo(10.5);
    assertThat(out.get("summary").get("errorsPerSecond").asDouble()).isEqualTo(0.5);
    assertThat(out.get("windowSeconds").asInt()).isEqualTo(10);
  }

  @Test
  void shouldCountRecentDeadLettersAndSayWhenThereMayHaveBeenMore() {
    put(topics.deadLetter(), "x", DashboardRecords.deadLetter("t", 1, "old"), NOW - 301_000);
    put(topics.deadLetter(), "x", DashboardRecords.deadLetter("t", 2, "recent"), NOW - 299_000);
    JsonNode letters = overview.build(EVERYONE, NOW).get("summary").get("deadLetters");
    assertThat(letters.get("count").asInt()).isEqualTo(1);
    assertThat(letters.get("windowSeconds").asInt()).isEqualTo(300);
    assertThat(letters.get("atLeast").asBoolean()).isFalse();

    put(topics.deadLetter(), "x", DashboardRecords.deadLetter("t", 3, "recent"), NOW - 1000);
    put(topics.deadLetter(), "x", DashboardRecords.deadLetter("t", 4, "recent"), NOW - 500);
    letters = overview.build(EVERYONE, NOW).get("summary").get("deadLetters");
    assertThat(letters.get("count").asInt()).as("the three kept, all recent").isEqualTo(3);
    assertThat(letters.get("atLeast").asBoolean()).as("older ones were dropped, maybe recent too").isTrue();
  }

  @Test
  void shouldShowAKeyOnlyItsModelsAndJobsAndNoDeadLetters() {
    twoSlotsOnHostA();
    put(topics.jobStatus(), "j1", DashboardRecords.job("j1", "demo", "RUNNING", NOW - 1000));
    put(topics.jobStatus(), "j2", DashboardRecords.job("j2", "demo-a", "RUNNING", NOW - 1000));
    put(topics.jobStatus(), "j3", DashboardRecords.job("j3", "demo", "QUEUED", 0));
    put(topics.jobStatus(), "j4", DashboardRecords.job("j4", "demo", "DONE", NOW - 1000));
    put(topics.deadLetter(), "x", DashboardRecords.deadLetter("t", 1, "recent"), NOW);

    JsonNode out = overview.build(new Views.Viewer("demo"::equals, false), NOW);

    assertThat(out.get("models")).extracting(m -> m.get("model").asText()).containsExactly("demo");
    assertThat(out.get("summary").get("jobsRunning").asInt()).isEqualTo(1);
    assertThat(out.get("summary").get("jobsQueued").asInt()).isEqualTo(1);
    assertThat(out.get("summary").get("deadLetters").isNull()).isTrue();
    assertThat(overview.build(EVERYONE, NOW).get("summary").get("jobsRunning").asInt()).isEqualTo(2);
  }

  private void call(String model, String outcome, long ms) {
    Timer.builder(Traffic.TIMER).tag("model", model).tag("endpoint", "infer").tag("outcome", outcome)
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(60))
        .register(registry).record(Duration.ofMillis(ms));
  }
}

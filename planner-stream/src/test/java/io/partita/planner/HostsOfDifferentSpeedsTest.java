package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.DeadLetter;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ServiceModel;
import io.partita.avro.SlotAssignment;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanSettings;
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
 * Hosts of different speeds in the planner topology (the live planner's builder in the test
 * driver): a host that joins without timings is planned from the most similar measured host until
 * its own timings arrive, and under the accuracy objective a fast host runs the accurate version
 * where a slow one runs the cheaper version.
 */
class HostsOfDifferentSpeedsTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private final Topics topics = new Topics("t");
  private final PlanSettings settings = PlanSettings.defaults(topics);
  @TempDir Path stateDir;
  private PlanRun run;
  private long ts = 1;

  @BeforeEach
  void start() {
    run = new PlanRun(settings, CODECS, stateDir);
  }

  @AfterEach
  void stop() {
    run.close();
  }

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void pipe(String topic, String key, T value) {
    run.pipe(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value), ts++);
  }

  private <T extends SpecificRecord> T plan(PlanTable table, String key, Class<T> type) {
    byte[] bytes = run.tables().get(table).get(key);
    assertThat(bytes).as(table.id() + " " + key + " in " + run.tables().get(table).keySet()).isNotNull();
    return CODECS.codec(type).decode(table.topic(topics), bytes);
  }

  private void time(String model, String version, String host, int size, int batch, double ms) {
    TimingEvent t = TimingEvent.newBuilder(timing(model, version, host, "cpu", size, ms)).setBatch(batch).build();
    pipe(topics.profileTimings(), model + "/" + version + "/" + host + "/" + size + "/" + batch + "/" + ts, t);
  }

  @Test
  void shouldPlanAJoiningHostFromTheMostSimilarMeasuredHostUntilItsOwnTimingsArrive() {
    pipe(topics.catalogModels(), "rec/1", version("rec", "1", "CPU"));
    pipe(topics.catalogServices(), "rec", serviceModel("rec", "rec", 1));
    pipe(topics.hostEnvironments(), "host-a", host("host-a", 4, 0, 100));
    // host-a measured batch 1 at size 1 (version choice compares that) and batch 4 at sizes 1, 2
    // and 4 (the profile with the most sizes, which groupings are planned from).
    time("rec", "1", "host-a", 1, 1, 2.0);
    time("rec", "1", "host-a", 1, 4, 10.0);
    time("rec", "1", "host-a", 2, 4, 6.0);
    time("rec", "1", "host-a", 4, 4, 4.0);
    run.plan();

    // Given: host-b joins, half as fast by its baseline, with no timing of its own.
    pipe(topics.hostEnvironments(), "host-b", host("host-b", 2, 0, 50));
    run.plan();

    // Then: its plan is host-a's profile with doubled times, and says so.
    PartitionPlan predicted = plan(PlanTable.PARTITIONS, "rec/1/host-b/cpu", PartitionPlan.class);
    assertThat(predicted.getPredictedFrom()).isEqualTo("host-a");
    assertThat(predicted.getDefaultPlan()).isFalse();
    assertThat(predicted.getBatch()).isEqualTo(4);
    assertThat(predicted.getSizes()).containsExactly(1, 1);
    assertThat(predicted.getMaxLatencyMs()).isEqualTo(20.0);
    assertThat(predicted.getWhy()).startsWith("predicted from host host-a's timings x baseline 100.0 / 50.0 (no timing"
        + " of its own yet): [1, 1] predicted 400.0/s");
    assertThat(plan(PlanTable.ASSIGNMENTS, "host-b/cpu-0", SlotAssignment.class).getMaxBatch()).isEqualTo(4);
    VersionChoice choice = plan(PlanTable.VERSIONS, "rec/host-b", VersionChoice.class);
    assertThat(choice.getCandidates().get(0).getPredicted()).isTrue();
    assertThat(choice.getCandidates().get(0).getSourceHost()).isEqualTo("host-a");

    // When host-a's profile changes where version choice does not look (batch 4), the prediction follows it.
    time("rec", "1", "host-a", 1, 4, 5.0);
    run.plan();
    assertThat(plan(PlanTable.VERSIONS, "rec/host-b", VersionChoice.class)).isEqualTo(choice);
    PartitionPlan followed = plan(PlanTable.PARTITIONS, "rec/1/host-b/cpu", PartitionPlan.class);
    assertThat(followed.getPredictedFrom()).isEqualTo("host-a");
    assertThat(followed.getMaxLatencyMs()).isEqualTo(10.0);
    assertThat(followed.getPredictedThroughput()).isEqualTo(800.0);

    // No grouping-mode measurement is asked of host-b while its plan is predicted (host-a's are).
    assertThat(run.profileRequests()).extracting(kv -> kv.key).doesNotContain("host-b");

    // When host-b's own timings arrive, they replace the prediction.
    time("rec", "1", "host-b", 1, 1, 3.0);
    time("rec", "1", "host-b", 1, 4, 8.0);
    time("rec", "1", "host-b", 2, 4, 3.0);
    run.plan();
    PartitionPlan measured = plan(PlanTable.PARTITIONS, "rec/1/host-b/cpu", PartitionPlan.class);
    assertThat(measured.getPredictedFrom()).isNull();
    assertThat(measured.getWhy()).doesNotContain("predicted from host");
    assertThat(measured.getSizes()).containsExactly(2);
    assertThat(measured.getMaxLatencyMs()).isEqualTo(3.0);
    assertThat(plan(PlanTable.VERSIONS, "rec/host-b", VersionChoice.class).getCandidates().get(0).getPredicted()).isFalse();
  }

  @Test
  void shouldRunTheAccurateVersionOnAFastHostAndTheCheaperOneOnASlowHostUnderTheAccuracyObjective() {
    pipe(topics.catalogModels(), "heavy/1", ModelVersion(version("heavy", "1", "CPU"), 0.95));
    pipe(topics.catalogModels(), "heavy/2", ModelVersion(version("heavy", "2", "CPU"), 0.90));
    ServiceModel accuracy = ServiceModel.newBuilder(serviceModel("heavy", "heavy", 1)).setVersionObjective("accuracy")
        .setLatencyObjectiveMs(6.0).build();
    pipe(topics.catalogServices(), "heavy", accuracy);
    // The lab measured both versions; the fast host is three times as fast by its baseline, the slow
    // one as fast as the lab. Version 1 is predicted at 4 ms on the fast host and 12 ms on the slow one.
    pipe(topics.hostEnvironments(), "lab", host("lab", 2, 0, 100));
    pipe(topics.hostEnvironments(), "fast", host("fast", 2, 0, 300));
    pipe(topics.hostEnvironments(), "slow", host("slow", 2, 0, 100));
    time("heavy", "1", "lab", 1, 1, 12.0);
    time("heavy", "2", "lab", 1, 1, 1.5);
    run.plan();

    VersionChoice fast = plan(PlanTable.VERSIONS, "heavy/fast", VersionChoice.class);
    VersionChoice slow = plan(PlanTable.VERSIONS, "heavy/slow", VersionChoice.class);
    assertThat(fast.getChosenVersion()).isEqualTo("1");
    assertThat(slow.getChosenVersion()).isEqualTo("2");
    assertThat(plan(PlanTable.VERSIONS, "heavy/lab", VersionChoice.class).getChosenVersion()).isEqualTo("2");
    assertThat(List.of(fast, slow)).allSatisfy(c -> {
      assertThat(c.getObjective()).isEqualTo("accuracy");
      assertThat(c.getLatencyObjectiveMs()).isEqualTo(6.0);
    });
    assertThat(fast.getCandidates()).extracting(VersionCandidate::getVersion, VersionCandidate::getStatus)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("1", "CHOSEN"), org.assertj.core.groups.Tuple.tuple("2", "RUNNER_UP"));
    assertThat(fast.getCandidates().get(1).getReason()).startsWith("lost to 1: less accurate (0.9 against 0.95)");
    assertThat(slow.getCandidates().get(1).getReason()).isEqualTo("latency 12.0 ms predicted from host lab (12.0 ms"
        + " there x baseline 100.0 / 100.0) exceeds the objective of 6.0 ms");
    // Each host's partition plan runs its own version, predicted from the lab.
    assertThat(plan(PlanTable.PARTITIONS, "heavy/1/fast/cpu", PartitionPlan.class).getPredictedFrom()).isEqualTo("lab");
    assertThat(plan(PlanTable.PARTITIONS, "heavy/2/slow/cpu", PartitionPlan.class).getPredictedFrom()).isEqualTo("lab");
    assertThat(run.tables().get(PlanTable.PARTITIONS).keySet()).noneMatch(k -> k.startsWith("heavy/2/fast/")
        || k.startsWith("heavy/1/slow/"));
  }

  @Test
  void shouldDeadLetterAServiceModelWithAnUnknownVersionObjective() {
    pipe(topics.catalogModels(), "rec/1", version("rec", "1", "CPU"));
    pipe(topics.catalogServices(), "rec", ServiceModel.newBuilder(serviceModel("rec", "rec", 1))
        .setVersionObjective("fastest").build());
    run.plan();

    assertThat(run.deadLetters()).singleElement().satisfies(kv -> {
      DeadLetter letter = CODECS.codec(DeadLetter.class).decode(topics.deadLetter(), kv.value);
      assertThat(letter.getError()).isEqualTo("versionObjective: 'fastest' is not one of [latency, accuracy]");
      assertThat(letter.getTopic()).isEqualTo(topics.catalogServices());
    });
  }

  private static io.partita.avro.ModelVersion ModelVersion(io.partita.avro.ModelVersion v, double accuracy) {
    return io.partita.avro.ModelVersion.newBuilder(v).setAccuracy(accuracy).build();
  }
}

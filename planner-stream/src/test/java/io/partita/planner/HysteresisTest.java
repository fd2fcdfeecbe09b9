package io.partita.planner;

import static io.partita.planner.TestRecords.host;
import static io.partita.planner.TestRecords.serviceModel;
import static io.partita.planner.TestRecords.timing;
import static io.partita.planner.TestRecords.version;
import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.TimingEvent;
import io.partita.avro.VersionChoice;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.replay.PlanRun;
import io.partita.planner.stream.PlanTable;
import io.partita.planning.grouping.GroupingObjective;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plans settle: the same inputs, or timings jittered by a few percent, re-planned again and again
 * leave the slot assignments and the version choices of the first plan untouched. Two versions
 * that measure within 1 % of each other and groupings within 4 % make a fresh plan flip under that
 * noise, which the control (hysteresis 0) shows.
 */
class HysteresisTest {
  private static final Codecs CODECS = Codecs.singleObject();
  private static final int ROUNDS = 25;
  private final Topics topics = new Topics("t");
  @TempDir Path stateDir;

  private static PlanSettings settings(Topics topics, double hysteresis) {
    return new PlanSettings(topics, GroupingObjective.THROUGHPUT, 0, Long.MAX_VALUE, 1.0, hysteresis);
  }

  @SuppressWarnings("unchecked")
  private <T extends SpecificRecord> void pipe(PlanRun run, String topic, String key, T value) {
    run.pipe(topic, key, CODECS.codec((Class<T>) value.getClass()).encode(topic, value), 1);
  }

  /** Version 1 and 2 of rec: T(1) 10 and 9.9 ms, T(2) 5.2, T(4) 2.7 (groupings 400, 385, 370 per s). */
  private void timings(PlanRun run, Random jitter, double amplitude, long round) {
    double[][] base = {{10.0, 5.2, 2.7}, {9.9, 5.15, 2.68}};
    int[] sizes = {1, 2, 4};
    for (int v = 0; v < 2; v++) {
      for (int i = 0; i < sizes.length; i++) {
        double factor = 1 + amplitude * (2 * jitter.nextDouble() - 1);
        TimingEvent e = TimingEvent.newBuilder(timing("rec", String.valueOf(v + 1), "host-a", "cpu", sizes[i], base[v][i] * factor))
            .setTimestamp(1000 + round).build();
        pipe(run, topics.profileTimings(), "rec-" + v + "-" + i, e);
      }
    }
  }

  /** How many rounds changed the assignments or the version choices after the first plan. */
  private int changesOverRounds(double hysteresis, double amplitude, Path dir) {
    try (PlanRun run = new PlanRun(settings(topics, hysteresis), CODECS, dir)) {
      pipe(run, topics.catalogModels(), "rec/1", version("rec", "1", "CPU"));
      pipe(run, topics.catalogModels(), "rec/2", version("rec", "2", "CPU"));
      pipe(run, topics.catalogServices(), "rec", serviceModel("rec", "rec", 1));
      pipe(run, topics.hostEnvironments(), "host-a", host("host-a", 4, 0));
      Random jitter = new Random(42);
      timings(run, jitter, amplitude, 0);
      run.plan();
      List<Object> first = snapshot(run);
      int changes = 0;
      List<Object> previous = first;
      for (int round = 1; round <= ROUNDS; round++) {
        timings(run, jitter, amplitude, round);
        run.plan();
        List<Object> now = snapshot(run);
        if (!now.equals(previous)) {
          changes++;
        }
        previous = now;
      }
      return changes;
    }
  }

  /** The assignments' bytes and the chosen version per model/host. */
  private List<Object> snapshot(PlanRun run) {
    List<Object> out = new ArrayList<>();
    run.tables().get(PlanTable.ASSIGNMENTS).forEach((k, v) -> out.add(k + "=" + Arrays.toString(v)));
    SortedMap<String, String> chosen = new TreeMap<>();
    run.tables().get(PlanTable.VERSIONS).forEach((k, v) ->
        chosen.put(k, CODECS.codec(VersionChoice.class).decode(PlanTable.VERSIONS.topic(topics), v).getChosenVersion()));
    out.add(chosen);
    return out;
  }

  @Test
  void shouldNotChangeThePlanWhenTheSameInputsArriveAgain() {
    assertThat(changesOverRounds(PlanSettings.DEFAULT_HYSTERESIS, 0, stateDir.resolve("same"))).isZero();
  }

  @Test
  void shouldNotChangeThePlanWhenTimingsJitterByAFewPercent() {
    assertThat(changesOverRounds(PlanSettings.DEFAULT_HYSTERESIS, 0.03, stateDir.resolve("jitter"))).isZero();
  }

  @Test
  void shouldFlipBackAndForthUnderTheSameJitterWithoutHysteresis() {
    assertThat(changesOverRounds(0, 0.03, stateDir.resolve("control"))).as("rounds that changed the plan").isPositive();
  }

  @Test
  void shouldStillTakeAPlanThatIsBetterByMoreThanTheMargin() {
    try (PlanRun run = new PlanRun(settings(topics, PlanSettings.DEFAULT_HYSTERESIS), CODECS, stateDir.resolve("better"))) {
      pipe(run, topics.catalogModels(), "rec/1", version("rec", "1", "CPU"));
      pipe(run, topics.catalogModels(), "rec/2", version("rec", "2", "CPU"));
      pipe(run, topics.catalogServices(), "rec", serviceModel("rec", "rec", 1));
      pipe(run, topics.hostEnvironments(), "host-a", host("host-a", 4, 0));
      timings(run, new Random(1), 0, 0);
      run.plan();
      String before = CODECS.codec(VersionChoice.class).decode(PlanTable.VERSIONS.topic(topics),
          run.tables().get(PlanTable.VERSIONS).get("rec/host-a")).getChosenVersion();
      String other = before.equals("1") ? "2" : "1";

      for (int size : new int[] {1, 2, 4}) {
        pipe(run, topics.profileTimings(), "faster-" + size, TimingEvent.newBuilder(timing("rec", other, "host-a", "cpu", size, 1.0 / size))
            .setTimestamp(5000).build());
      }
      run.plan();

      assertThat(CODECS.codec(VersionChoice.class).decode(PlanTable.VERSIONS.topic(topics),
          run.tables().get(PlanTable.VERSIONS).get("rec/host-a")).getChosenVersion()).isEqualTo(other);
      assertThat(Map.copyOf(run.tables().get(PlanTable.ASSIGNMENTS))).isNotEmpty();
    }
  }
}

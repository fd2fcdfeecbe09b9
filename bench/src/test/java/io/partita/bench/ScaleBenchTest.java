package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.bench.ScaleBench.Cell;
import io.partita.bench.ScaleBench.Outcome;
import io.partita.bench.ScaleBench.Rounds;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scale part at a tiny size: the fleet it builds is planned whole, a host's re-profile writes
 * plan records and the same bytes again write none, and churn runs one pass per simulated second,
 * new hosts planned by prediction until their profile arrives.
 * Figures (speed, memory) are the benchmark's, not checked here.
 */
class ScaleBenchTest {

  @Test
  void shouldSkipACellTheHeapCannotHoldAndSayHowMuchItNeeds() {
    long gib = 1L << 30;
    // the goal's cell out of memory in ./partita's old 2 GB heap: refused before it starts, with the fix
    String why = ScalePart.tooBigForHeap(new Cell(1000, 500, 10), 2 * gib);
    assertThat(why).contains("needs about 3471 MiB", "may use 2048 MiB", "PARTITA_JAVA_OPTS=-Xmx4g");
    assertThat(ScalePart.tooBigForHeap(new Cell(1000, 500, 10), 12 * gib)).isNull();
    // every other cell of a full run fits in 2 GB
    ScalePart.FULL.stream().filter(c -> c.hosts() * c.models() < 500_000)
        .forEach(c -> assertThat(ScalePart.tooBigForHeap(c, 2 * gib)).as(c.label()).isNull());
  }
  @TempDir Path dir;

  @Test
  void shouldPlanTheWholeFleetAndReplanWhatChanged() throws Exception {
    Cell cell = new Cell(8, 5, 3);
    Outcome o = ScaleBench.run(cell, 1, new Rounds(3, 2, 4, 3), dir);

    ScaleFleet fleet = new ScaleFleet(cell.hosts(), cell.models(), cell.serviceModelsPerModel(), 1);
    long versionRecords = (long) cell.hosts() * cell.models();
    assertThat(o.events()).as("timing events of every host and model")
        .isEqualTo(countTimings(fleet));
    assertThat(o.initial().recordsByTable().get("versions")).as("a version choice per model and host")
        .isEqualTo((int) versionRecords);
    assertThat(o.initial().recordsByTable().get("routes")).as("a route per service model")
        .isEqualTo(cell.models() * cell.serviceModelsPerModel());
    assertThat(o.oneHost()).allSatisfy(p -> assertThat(p.records()).as("a host 20 % slower or faster").isPositive());
    assertThat(o.unchangedRecords()).as("records written when the same timings arrive again").isZero();
    assertThat(o.churn()).hasSize(3).allSatisfy(phase -> {
      assertThat(phase.passes()).isEqualTo(4);
      assertThat(phase.recordsPerMinute().get("versions")).as("a leaving host's version choices are deleted").isPositive();
    });
    assertThat(o.churn().get(0).predictedPlans()).isZero();
    assertThat(o.churn().get(2).predictedPlans()).as("new hosts planned by prediction until their profile arrived")
        .isPositive();
    assertThat(o.storeBytes()).isPositive();
  }

  @Test
  void shouldRefuseACellThatIsNotThreeCounts() {
    assertThatThrownBy(() -> Cell.parse("100x50")).hasMessageContaining("HOSTSxMODELSxSERVICE_MODELS");
    assertThatThrownBy(() -> Cell.parse("axbxc")).hasMessageContaining("three whole numbers");
    assertThatThrownBy(() -> Cell.parse("1x5x5")).hasMessageContaining("at least 2 hosts");
    assertThat(Cell.parse(" 10x50x1000 ")).isEqualTo(new Cell(10, 50, 1000));
  }

  private static long countTimings(ScaleFleet fleet) {
    long n = 0;
    for (int h = 0; h < fleet.hosts; h++) {
      for (int m = 0; m < fleet.models; m++) {
        n += fleet.timings(h, m, 1, 0).size();
      }
    }
    return n;
  }
}

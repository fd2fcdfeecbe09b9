package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.partita.planning.ProfilePoint;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class MeasuredGroupingsTest {
  private static final long GIB = 1L << 30;

  /** N cores, b = 1, T(1) = 10 ms, T(2) = 6 ms, T(3) = 5 ms (only the sizes that fit). */
  private static GroupingProblem pool(int n) {
    List<ProfilePoint> points = new java.util.ArrayList<>(List.of(new ProfilePoint(1, 10, GIB), new ProfilePoint(2, 6, GIB)));
    if (n >= 3) {
      points.add(new ProfilePoint(3, 5, GIB));
    }
    return new GroupingProblem("m", n, 64 * GIB, 1, points, 0, Long.MAX_VALUE, null, GroupingObjective.THROUGHPUT);
  }

  private static Map<List<Integer>, GroupingMeasurement> measured(GroupingMeasurement... ms) {
    Map<List<Integer>, GroupingMeasurement> out = new TreeMap<>(GroupingPlanner::compareSizeLists);
    for (GroupingMeasurement m : ms) {
      out.put(m.sizes(), m);
    }
    return out;
  }

  private static MeasuredChoice choose(GroupingProblem p, Map<List<Integer>, GroupingMeasurement> m, Interference i) {
    return MeasuredGroupings.choose(p, GroupingPlanner.plan(p), m, i);
  }

  @Test
  void shouldChooseExactlyAsThePlannerWhenNothingWasMeasured() {
    Random random = new Random(19);
    for (int trial = 0; trial < 200; trial++) {
      int n = 1 + random.nextInt(8);
      List<ProfilePoint> points = new java.util.ArrayList<>();
      for (int k = 1; k <= n; k++) {
        if (k == 1 || random.nextBoolean()) {
          points.add(new ProfilePoint(k, 1 + random.nextInt(20), random.nextInt(4) * GIB));
        }
      }
      GroupingProblem problem = new GroupingProblem("m", n, (1 + random.nextInt(8)) * GIB, 1 + random.nextInt(4),
          points, random.nextInt(3), 1 + random.nextInt(6), null,
          random.nextBoolean() ? GroupingObjective.THROUGHPUT : GroupingObjective.LATENCY);
      GroupingPlan fresh = GroupingPlanner.plan(problem);

      MeasuredChoice choice = MeasuredGroupings.choose(problem, fresh, Map.of(), Interference.none());

      assertThat(choice.plan()).as("trial %d", trial).isEqualTo(fresh);
      if (fresh.planned()) {
        assertThat(choice.choice().basis()).isEqualTo(ChoiceBasis.PREDICTED);
        assertThat(choice.choice().interferenceFactor()).isEqualTo(1.0);
      }
    }
  }

  @Test
  void shouldSwitchToTheGroupingThatMeasuredBetterWhenPointsPredictedTheOther() {
    GroupingProblem problem = pool(2); // predicted: [1,1] 200/s, [2] 166.7/s

    MeasuredChoice choice = choose(problem,
        measured(new GroupingMeasurement(List.of(1, 1), 120, 16), new GroupingMeasurement(List.of(2), 160, 6.2)),
        Interference.none());

    assertThat(choice.plan().choice().sizes()).containsExactly(2);
    assertThat(choice.choice().basis()).isEqualTo(ChoiceBasis.MEASURED);
    assertThat(choice.choice().expectedThroughputPerSecond()).isEqualTo(160.0);
    assertThat(choice.plan().method()).isEqualTo("measured");
    assertThat(choice.runnerUp().grouping().sizes()).containsExactly(1, 1);
    assertThat(choice.why()).isEqualTo("[2] measured 160.0/s (predicted 166.7/s), ahead of [1, 1] measured 120.0/s (predicted 200.0/s)");
  }

  @Test
  void shouldKeepThePredictedChoiceWhenItsMeasurementConfirmsIt() {
    MeasuredChoice choice = choose(pool(2), measured(new GroupingMeasurement(List.of(1, 1), 190, 11)),
        Interference.none());

    assertThat(choice.plan().choice().sizes()).containsExactly(1, 1);
    assertThat(choice.choice().basis()).isEqualTo(ChoiceBasis.MEASURED);
    assertThat(choice.plan().method()).isEqualTo("dp-1d");
  }

  @Test
  void shouldCorrectUnmeasuredPredictionsByTheInterferenceOfMeasuredOnes() {
    GroupingProblem problem = pool(3); // predicted: [1,1,1] 300, [2,1] 266.7, [3] 200
    Interference twoRunTogetherAt60 = Interference.of(List.of(new InterferenceSample(2, 120, 200)));

    MeasuredChoice choice = choose(problem, Map.of(), twoRunTogetherAt60);

    // f(1) = 1, f(2) = f(3) = 0.6: [1,1,1] 180, [2,1] 160, [3] 200
    assertThat(choice.plan().choice().sizes()).containsExactly(3);
    assertThat(choice.choice().basis()).isEqualTo(ChoiceBasis.PREDICTED);
    assertThat(choice.choice().interferenceFactor()).isEqualTo(1.0);
    assertThat(choice.runnerUp().grouping().sizes()).containsExactly(1, 1, 1);
    assertThat(choice.runnerUp().expectedThroughputPerSecond()).isCloseTo(180.0, offset(1e-9));
    assertThat(choice.plan().method()).isEqualTo("corrected prediction");
  }

  @Test
  void shouldAverageRatiosGeometricallyAndInterpolateBetweenPartitionCounts() {
    Interference balanced = Interference.of(List.of(new InterferenceSample(3, 100, 200), new InterferenceSample(3, 200, 100)));
    assertThat(balanced.factor(3)).isCloseTo(1.0, offset(1e-12));

    Interference i = Interference.of(List.of(new InterferenceSample(3, 70, 100), new InterferenceSample(5, 150, 100)));
    assertThat(i.factor(1)).isEqualTo(1.0);
    assertThat(i.factor(2)).isCloseTo(0.85, offset(1e-12));
    assertThat(i.factor(3)).isCloseTo(0.7, offset(1e-12));
    assertThat(i.factor(4)).isCloseTo(1.1, offset(1e-12));
    assertThat(i.factor(9)).isCloseTo(1.5, offset(1e-12));
    assertThat(Interference.none().factor(4)).isEqualTo(1.0);
  }

  @Test
  void shouldIgnoreAMeasuredGroupingThatDoesNotFitTheShare() {
    MeasuredChoice choice = choose(pool(2), measured(new GroupingMeasurement(List.of(1, 1, 1), 900, 10),
        new GroupingMeasurement(List.of(4), 900, 10)), Interference.none());

    assertThat(choice.plan().choice().sizes()).containsExactly(1, 1);
    assertThat(choice.choice().basis()).isEqualTo(ChoiceBasis.PREDICTED);
  }

  @Test
  void shouldKeepAMeasuredRunningGroupingWithinTheMarginAndReplaceItBeyond() {
    GroupingProblem problem = pool(2);
    Map<List<Integer>, GroupingMeasurement> close = measured(new GroupingMeasurement(List.of(1, 1), 150, 12),
        new GroupingMeasurement(List.of(2), 160, 6.2));
    MeasuredChoice kept = MeasuredGroupings.keepRunning(problem, choose(problem, close, Interference.none()),
        List.of(1, 1), close, Interference.none(), 0.10);

    assertThat(kept.plan().choice().sizes()).containsExactly(1, 1);
    assertThat(kept.plan().method()).isEqualTo("kept (hysteresis)");
    assertThat(kept.choice().basis()).isEqualTo(ChoiceBasis.MEASURED);
    assertThat(kept.runnerUp().grouping().sizes()).containsExactly(2);

    Map<List<Integer>, GroupingMeasurement> far = measured(new GroupingMeasurement(List.of(1, 1), 120, 16),
        new GroupingMeasurement(List.of(2), 160, 6.2));
    MeasuredChoice replaced = MeasuredGroupings.keepRunning(problem, choose(problem, far, Interference.none()),
        List.of(1, 1), far, Interference.none(), 0.10);

    assertThat(replaced.plan().choice().sizes()).containsExactly(2);
    assertThat(replaced.choice().basis()).isEqualTo(ChoiceBasis.MEASURED);
  }
}

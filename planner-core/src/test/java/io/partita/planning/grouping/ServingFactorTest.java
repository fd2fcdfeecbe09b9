package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Like with like under serving ({@link ServingFactor}, {@link MeasuredGroupings}): a 2-core pool
 * whose single-size points (batch 1: T(1) = 10 ms, T(2) = 6 ms) predict [1, 1] at 200/s and [2] at
 * 166.7/s runs [1, 1], measured from serving at a fraction of its idle figure (serving's own costs:
 * a larger per-row LoRA graph, the cores the gateway and broker take). The alternatives have only
 * idle figures (the profiler's, or predictions), which are scaled by the pool's serving factor
 * before the comparison and the hysteresis (10 %).
 */
class ServingFactorTest {
  private static final double MARGIN = 0.10;
  private static final List<Integer> RUNNING = List.of(1, 1);
  private static final double PREDICTED_11 = 200.0;
  private static final double PREDICTED_2 = 1000.0 / 6;

  private static GroupingProblem pool() {
    List<ProfilePoint> points = List.of(new ProfilePoint(1, 10, 1L << 30), new ProfilePoint(2, 6, 1L << 30));
    return new GroupingProblem("m", 2, 64L << 30, 1, points, 0, Long.MAX_VALUE, null, GroupingObjective.THROUGHPUT);
  }

  /** The profiler's idle figures: each grouping at {@code ratio} of its prediction, null = not measured. */
  private static Map<List<Integer>, GroupingMeasurement> profiled(Double ratio11, Double ratio2) {
    Map<List<Integer>, GroupingMeasurement> out = new HashMap<>();
    if (ratio11 != null) {
      out.put(RUNNING, new GroupingMeasurement(RUNNING, PREDICTED_11 * ratio11, 12));
    }
    if (ratio2 != null) {
      out.put(List.of(2), new GroupingMeasurement(List.of(2), PREDICTED_2 * ratio2, 6));
    }
    return out;
  }

  /** The pool's interference, learnt from the profiler's figures as the planner learns it. */
  private static Interference interference(Map<List<Integer>, GroupingMeasurement> profiled) {
    List<InterferenceSample> samples = new ArrayList<>();
    profiled.values().forEach(m -> samples.add(new InterferenceSample(m.sizes().size(), m.throughputPerSecond(),
        m.sizes().size() == 1 ? PREDICTED_2 : PREDICTED_11)));
    return Interference.of(samples);
  }

  /** [1, 1] runs, measured from serving at {@code servedOfIdle} of its idle figure; the plan made under the serving factor. */
  private static MeasuredChoice replan(Double ratio11, Double ratio2, double servedOfIdle, boolean likeWithLike) {
    GroupingProblem problem = pool();
    Map<List<Integer>, GroupingMeasurement> profiled = profiled(ratio11, ratio2);
    Interference interference = interference(profiled);
    double idle11 = ratio11 != null ? PREDICTED_11 * ratio11 : PREDICTED_11 * interference.factor(2);
    Map<List<Integer>, GroupingMeasurement> served = Map.of(RUNNING,
        new GroupingMeasurement(RUNNING, servedOfIdle * idle11, 100, MeasurementSource.SERVING));
    ServingFactor serving = likeWithLike
        ? MeasuredGroupings.servingFactor(problem, RUNNING, profiled, served, interference) : ServingFactor.none();
    Map<List<Integer>, GroupingMeasurement> measured = serving.compared(profiled, served);
    if (!likeWithLike) {
      measured = new HashMap<>(profiled); // the comparison before: the serving figure against idle ones as they are
      measured.putAll(served);
    }
    MeasuredChoice fresh = MeasuredGroupings.choose(problem, GroupingPlanner.plan(problem), measured, interference, serving);
    return MeasuredGroupings.keepRunning(problem, fresh, RUNNING, measured, interference, MARGIN, serving);
  }

  static Stream<Arguments> underLoad() {
    return Stream.of(
        // name, [1,1] idle / prediction, [2] idle / prediction, [1,1] served / its idle, sizes, why starts with
        Arguments.of("served at 0.1 of its idle figure ([1,1] idle 140/s from f(2) = 0.7), [2] idle at 0.7: no switch",
            null, 0.7, 0.1, List.of(1, 1),
            "[1, 1] measured from serving 14.0/s (predicted 200.0/s), ahead of [2] measured idle 116.7/s x serving 0.10 = 11.7/s"),
        Arguments.of("the same with [1,1]'s idle figure measured by the profiler (140/s)", 0.7, 0.7, 0.1, List.of(1, 1),
            "[1, 1] measured from serving 14.0/s (predicted 200.0/s), ahead of [2] measured idle 116.7/s x serving 0.10 = 11.7/s"),
        Arguments.of("[2] idle at 0.9 (150/s against 140/s): better by 7 % under serving, within the hysteresis", 0.7, 0.9,
            0.1, List.of(1, 1),
            "kept [1, 1] measured from serving 14.0/s (predicted 200.0/s): [2] measured idle 150.0/s x serving 0.10 = 15.0/s"),
        Arguments.of("[2] idle at 1.0 (166.7/s against 140/s): better by 19 % under serving, the plan switches", 0.7, 1.0,
            0.1, List.of(2),
            "[2] measured idle 166.7/s x serving 0.10 = 16.7/s, ahead of [1, 1] measured from serving 14.0/s"),
        Arguments.of("[2] only predicted, no interference: 166.7/s x 0.1 against 20/s, no switch", null, null, 0.1,
            List.of(1, 1),
            "[1, 1] measured from serving 20.0/s (predicted 200.0/s), ahead of [2] predicted 166.7/s x serving 0.10 = 16.7/s"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("underLoad")
  void shouldSwitchUnderLoadOnlyWhenTheAlternativeIsBetterUnderTheSameServingConditions(String name, Double ratio11,
      Double ratio2, double servedOfIdle, List<Integer> sizes, String why) {
    MeasuredChoice choice = replan(ratio11, ratio2, servedOfIdle, true);

    assertThat(choice.plan().choice().sizes()).isEqualTo(sizes);
    assertThat(choice.why()).startsWith(why);
    AssessedGrouping running = choice.ranked().stream().filter(a -> a.grouping().sizes().equals(RUNNING)).findFirst()
        .orElseThrow();
    assertThat(running.basis()).as("the running grouping rests on what it served").isEqualTo(ChoiceBasis.MEASURED);
    assertThat(running.source()).isEqualTo(MeasurementSource.SERVING);
    assertThat(running.servingFactor()).as("a serving figure is not scaled again").isEqualTo(1.0);
  }

  @Test
  void shouldSwitchAwayUnderLoadWhenServingIsComparedWithIdleFiguresAsTheyAre() {
    // What the like-with-like comparison prevents: the first row of underLoad() compared unlike
    assertThat(replan(null, 0.7, 0.1, false).plan().choice().sizes()).containsExactly(2);
    assertThat(replan(null, 0.7, 0.1, true).plan().choice().sizes()).containsExactly(1, 1);
  }

  @Test
  void shouldCompareLatenciesUnderTheSameServingConditionsToo() {
    // Latency objective: [2] (one run of 6 ms) runs, served at 0.1 of its prediction (60 ms a run);
    // [1, 1]'s predicted 10 ms a run is 100 ms under the same serving costs.
    List<ProfilePoint> points = List.of(new ProfilePoint(1, 10, 1L << 30), new ProfilePoint(2, 6, 1L << 30));
    GroupingProblem problem = new GroupingProblem("m", 2, 64L << 30, 1, points, 0, Long.MAX_VALUE, null,
        GroupingObjective.LATENCY);
    Map<List<Integer>, GroupingMeasurement> served = Map.of(List.of(2),
        new GroupingMeasurement(List.of(2), PREDICTED_2 * 0.1, 60, MeasurementSource.SERVING));
    ServingFactor serving = MeasuredGroupings.servingFactor(problem, List.of(2), Map.of(), served, Interference.none());
    assertThat(serving.factor()).isCloseTo(0.1, offset(1e-9));

    MeasuredChoice like = MeasuredGroupings.keepRunning(problem, MeasuredGroupings.choose(problem,
        GroupingPlanner.plan(problem), served, Interference.none(), serving), List.of(2), served, Interference.none(),
        MARGIN, serving);
    MeasuredChoice unlike = MeasuredGroupings.keepRunning(problem, MeasuredGroupings.choose(problem,
        GroupingPlanner.plan(problem), served, Interference.none()), List.of(2), served, Interference.none(), MARGIN);

    assertThat(like.plan().choice().sizes()).containsExactly(2);
    AssessedGrouping alternative = like.ranked().stream().filter(a -> a.grouping().sizes().equals(RUNNING)).findFirst()
        .orElseThrow();
    assertThat(alternative.expectedLatencyMs()).isCloseTo(100, offset(1e-9));
    assertThat(unlike.plan().choice().sizes()).as("60 ms served against 10 ms idle").containsExactly(1, 1);
  }

  @Test
  void shouldReadTheFactorFromTheRunningGroupingsServedAndIdleFigures() {
    GroupingProblem problem = pool();
    Map<List<Integer>, GroupingMeasurement> served = Map.of(RUNNING,
        new GroupingMeasurement(RUNNING, 30, 20, MeasurementSource.SERVING));
    Interference at60 = Interference.of(List.of(new InterferenceSample(2, 120, 200)));

    ServingFactor measured = MeasuredGroupings.servingFactor(problem, RUNNING, profiled(0.75, null), served, at60);
    assertThat(measured.idlePerSecond()).isCloseTo(150, offset(1e-9));
    assertThat(measured.idleMeasured()).isTrue();
    assertThat(measured.factor()).isCloseTo(0.2, offset(1e-9));

    ServingFactor predicted = MeasuredGroupings.servingFactor(problem, RUNNING, Map.of(), served, at60);
    assertThat(predicted.idlePerSecond()).as("its prediction x f(2)").isCloseTo(120, offset(1e-9));
    assertThat(predicted.idleMeasured()).isFalse();
    assertThat(predicted.factor()).isCloseTo(0.25, offset(1e-9));

    assertThat(MeasuredGroupings.servingFactor(problem, RUNNING, profiled(0.75, null), Map.of(), at60).applies())
        .as("no serving figure of the running grouping: idle figures compared as they are").isFalse();
    assertThat(MeasuredGroupings.servingFactor(problem, List.of(3), Map.of(), served, at60).applies())
        .as("a running grouping that is not one of this pool").isFalse();
    assertThat(ServingFactor.none().factor()).isEqualTo(1.0);
  }

  @Test
  void shouldCompareByTheServingFigureUnderServingAndByTheIdleOneOtherwise() {
    Map<List<Integer>, GroupingMeasurement> profiled = profiled(0.75, 0.9);
    Map<List<Integer>, GroupingMeasurement> served = Map.of(RUNNING,
        new GroupingMeasurement(RUNNING, 30, 20, MeasurementSource.SERVING));
    ServingFactor applies = new ServingFactor(RUNNING, 30, 150, true);

    assertThat(applies.compared(profiled, served).get(RUNNING).source()).isEqualTo(MeasurementSource.SERVING);
    assertThat(applies.compared(profiled, served).get(List.of(2)).source()).isEqualTo(MeasurementSource.PROFILER);
    assertThat(ServingFactor.none().compared(profiled, served).get(RUNNING).source())
        .as("idle against idle").isEqualTo(MeasurementSource.PROFILER);
    assertThat(ServingFactor.none().compared(Map.of(), served).get(RUNNING).source())
        .as("a serving figure alone still counts as measured").isEqualTo(MeasurementSource.SERVING);
  }
}

package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The rules by which serving evidence is compared with the profile ({@link ServingRate}). */
class ServingRateTest {
  /** One partition's profile: 2 ms for a run of 1, 5 ms for 4, 8 ms for 8. */
  private static final SortedMap<Integer, Double> PROFILE = new TreeMap<>(Map.of(1, 2.0, 4, 5.0, 8, 8.0));
  private static final ServingRate.Fullness FULL = new ServingRate.Fullness(1000, 300);

  private static ServedRuns runs(double busyMs, int... sizeThenRuns) {
    SortedMap<Integer, Long> bySize = new TreeMap<>();
    long items = 0;
    for (int i = 0; i < sizeThenRuns.length; i += 2) {
      bySize.put(sizeThenRuns[i], (long) sizeThenRuns[i + 1]);
      items += (long) sizeThenRuns[i] * sizeThenRuns[i + 1];
    }
    return new ServedRuns(items, busyMs, bySize);
  }

  static Stream<Arguments> batchTimes() {
    return Stream.of(
        Arguments.of("a measured size", 4, 5.0),
        Arguments.of("between two measured sizes, linear", 2, 3.0),
        Arguments.of("between 4 and 8", 6, 6.5),
        Arguments.of("above the largest, proportional", 16, 16.0),
        Arguments.of("below the smallest, the smallest's time", 1, 2.0));
  }

  @ParameterizedTest(name = "{0}: T({1}) = {2}")
  @MethodSource("batchTimes")
  void shouldTakeTheTimeOfARunFromTheMeasuredBatchSizes(String name, int batch, double expected) {
    assertThat(ServingRate.batchTimeMs(PROFILE, batch)).isCloseTo(expected, offset(1e-12));
    SortedMap<Integer, Double> fromFour = new TreeMap<>(Map.of(4, 5.0, 8, 8.0));
    assertThat(ServingRate.batchTimeMs(fromFour, 1)).as("a smaller batch takes no longer than the smallest measured")
        .isEqualTo(5.0);
  }

  static Stream<Arguments> speeds() {
    return Stream.of(
        // name, runs, speed
        Arguments.of("as profiled at batch 1", runs(200, 1, 100), 1.0),
        Arguments.of("as profiled, mixed sizes", runs(100 * 2 + 10 * 8, 1, 100, 8, 10), 1.0),
        Arguments.of("ten times slower", runs(10 * 100 * 5.0, 4, 100), 0.1),
        Arguments.of("twice as fast as profiled", runs(100, 1, 100), 2.0),
        Arguments.of("sizes between measured ones compared with the interpolated time", runs(50 * 3.0, 2, 50), 1.0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("speeds")
  void shouldCompareTheTimeTheRunsTookWithWhatTheProfileGivesForTheSameRuns(String name, ServedRuns runs, double speed) {
    assertThat(ServingRate.speed(runs, PROFILE)).isCloseTo(speed, offset(1e-9));
  }

  @Test
  void shouldHaveNoSpeedWhenNothingRan() {
    assertThat(ServingRate.speed(ServedRuns.none(), PROFILE)).isNaN();
    assertThat(ServingRate.weight(ServedRuns.none(), FULL)).isZero();
  }

  static Stream<Arguments> weights() {
    return Stream.of(
        Arguments.of("a handful of fast runs", runs(10, 1, 5), 5 / 300.0),
        Arguments.of("half the items for full weight", runs(20, 1, 150), 0.5),
        Arguments.of("full by items", runs(600, 1, 300), 1.0),
        Arguments.of("full by busy time, few items", runs(1000, 8, 10), 1.0),
        Arguments.of("a quarter second of slow runs", runs(250, 1, 10), 0.25),
        Arguments.of("more than full weighs one", runs(5000, 1, 3000), 1.0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("weights")
  void shouldWeighAWindowByTheTrafficItCovers(String name, ServedRuns runs, double weight) {
    assertThat(ServingRate.weight(runs, FULL)).isCloseTo(weight, offset(1e-12));
  }

  @Test
  void shouldSumTheSlotsOfAGroupingAtThePlansBatchAndLendThePooledSpeedToASlotThatRanNothing() {
    // Two partitions of the profile above, the plan's batch 8 (8 ms: 1000/s each alone).
    ServingRate.Slot halfSpeed = new ServingRate.Slot(runs(2 * 100 * 2.0, 1, 100), PROFILE);
    ServingRate.Slot asProfiled = new ServingRate.Slot(runs(100 * 2.0, 1, 100), PROFILE);
    ServingRate.Slot idle = new ServingRate.Slot(ServedRuns.none(), PROFILE);

    ServingRate.Observed both = ServingRate.grouping(8, List.of(halfSpeed, asProfiled), FULL).orElseThrow();
    assertThat(both.throughputPerSecond()).isCloseTo(500 + 1000, offset(1e-9));
    assertThat(both.maxLatencyMs()).as("batch 8 at half speed").isCloseTo(16.0, offset(1e-9));
    assertThat(both.speed()).isCloseTo(400.0 / 600.0, offset(1e-12));
    assertThat(both.runs().items()).isEqualTo(200);

    ServingRate.Observed lent = ServingRate.grouping(8, List.of(halfSpeed, idle), FULL).orElseThrow();
    assertThat(lent.throughputPerSecond()).as("the idle slot at the other's speed").isCloseTo(500 + 500, offset(1e-9));
    assertThat(ServingRate.grouping(8, List.of(idle, idle), FULL)).as("nothing ran: no evidence").isEmpty();
  }

  static Stream<Arguments> updates() {
    return Stream.of(
        // name, recorded, observed, weight, margin, recorded after (null = nothing new)
        Arguments.of("no measurement, full window: the observed figure", null, 120.0, 1.0, 0.1, 120.0),
        Arguments.of("no measurement, a partial window is not enough to call it measured", null, 120.0, 0.9, 0.1, null),
        Arguments.of("measured 200, a full window at 20", 200.0, 20.0, 1.0, 0.1, 20.0),
        Arguments.of("measured 200, a window of weight 0.2 at 20 moves it a fifth of the way", 200.0, 20.0, 0.2, 0.1, 164.0),
        Arguments.of("measured 200, a window of weight 0.1 at 20 moves it by 9 %: not news", 200.0, 20.0, 0.1, 0.1, null),
        Arguments.of("within the margin: not news", 200.0, 185.0, 1.0, 0.1, null),
        Arguments.of("recovered: back up", 20.0, 200.0, 1.0, 0.1, 200.0),
        Arguments.of("margin 0: every change is recorded", 200.0, 199.0, 1.0, 0.0, 199.0),
        Arguments.of("nothing observed", 200.0, 0.0, 1.0, 0.1, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("updates")
  void shouldRecordAWindowOnlyWhenItSaysSomethingNew(String name, Double recorded, double observed, double weight,
      double margin, Double after) {
    OptionalDouble figure = ServingRate.update(recorded, observed, weight, margin);
    if (after == null) {
      assertThat(figure).isEmpty();
    } else {
      assertThat(figure.getAsDouble()).isCloseTo(after, offset(1e-9));
    }
  }

  static Stream<Arguments> capacities() {
    return Stream.of(
        // name, planned, observed, weight, capacity
        Arguments.of("serves at a tenth, full weight: the evidence's figure", 100.0, 10.0, 1.0, 10.0),
        Arguments.of("serves at a tenth, little traffic: cut a little", 100.0, 10.0, 0.1, 91.0),
        Arguments.of("recovered: the plan's figure again", 100.0, 100.0, 1.0, 100.0),
        Arguments.of("faster than planned: the plan's figure", 100.0, 180.0, 1.0, 100.0),
        Arguments.of("no evidence", 100.0, Double.NaN, 0.0, 100.0),
        Arguments.of("a default placement (no planned figure) stays 0", 0.0, 10.0, 1.0, 0.0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("capacities")
  void shouldCutCapacityTowardSlowerEvidenceByItsWeight(String name, double planned, double observed, double weight,
      double capacity) {
    assertThat(ServingRate.capacity(planned, observed, weight)).isCloseTo(capacity, offset(1e-9));
  }

  @Test
  void shouldCountTheWorkersCostPerItemBeyondTheRun() {
    // the engine could do 100,000/s (10 us an item); the worker spends 2 ms of the host per item
    assertThat(ServingRate.withOverhead(100_000, 0.002)).isCloseTo(1 / 0.00201, offset(1e-9));
    assertThat(ServingRate.withOverhead(100, 0.0)).as("no overhead").isEqualTo(100);
    assertThat(ServingRate.withOverhead(100, Double.NaN)).as("not known").isEqualTo(100);
    assertThat(ServingRate.withOverhead(0, 0.002)).as("an unknown capacity stays unknown").isZero();
  }

  @Test
  void shouldEstimateTheOverheadOfAHostThatHasNotSaidFromTheOthersCpuPerItem() {
    // 4 ms of half a core (2 ms of CPU), 1 ms of two cores (2 ms), 10 ms of one core (10 ms): median 2 ms of CPU
    List<double[]> others = List.of(new double[] {0.004, 0.5}, new double[] {0.001, 2}, new double[] {0.010, 1});
    assertThat(ServingRate.estimatedOverhead(others, 0.2)).hasValueCloseTo(0.010, offset(1e-12));
    assertThat(ServingRate.estimatedOverhead(others.subList(0, 2), 1)).as("two: their mean").hasValueCloseTo(0.002, offset(1e-12));
    assertThat(ServingRate.estimatedOverhead(List.of(), 1)).as("no one said").isEmpty();
    assertThat(ServingRate.estimatedOverhead(others, 0)).as("no budget known").isEmpty();
  }

  @Test
  void shouldRefuseNonsenseNamingTheField() {
    assertThatThrownBy(() -> new ServedRuns(-1, 0, new TreeMap<>())).hasMessageContaining("items");
    assertThatThrownBy(() -> new ServingRate.Fullness(0, 1)).hasMessageContaining("busyMs");
    assertThatThrownBy(() -> new ServingRate.Slot(ServedRuns.none(), new TreeMap<>())).hasMessageContaining("batchTimesMs");
  }
}

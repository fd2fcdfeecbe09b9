package io.partita.profiler.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class StabilityRuleTest {

  private static long[] sorted(long... values) {
    long[] copy = values.clone();
    Arrays.sort(copy);
    return copy;
  }

  @Test
  void shouldComputeTheOrderStatisticIntervalOfTheMedian() {
    long[] s = new long[100];
    for (int i = 0; i < 100; i++) {
      s[i] = i + 1;
    }
    // n=100: half width 1.96*10/2 = 9.8 -> ranks round(40.2)=40 and round(60.8)=61
    StabilityRule.MedianInterval interval = StabilityRule.medianInterval(s);
    assertThat(interval.lower()).isEqualTo(40);
    assertThat(interval.median()).isEqualTo(50);
    assertThat(interval.upper()).isEqualTo(61);
  }

  @Test
  void shouldCallIdenticalSamplesStable() {
    long[] s = new long[10];
    Arrays.fill(s, 1000);
    assertThat(StabilityRule.DEFAULT.isStable(s)).isTrue();
  }

  @Test
  void shouldNotCallStableBelowMinimumSamples() {
    long[] s = new long[9];
    Arrays.fill(s, 1000);
    assertThat(StabilityRule.DEFAULT.isStable(s)).isFalse();
  }

  @Test
  void shouldCallWidelySpreadSamplesUnstable() {
    // alternating 1000 and 2000: the median's interval spans both values
    long[] s = new long[40];
    for (int i = 0; i < s.length; i++) {
      s[i] = i % 2 == 0 ? 1000 : 2000;
    }
    assertThat(StabilityRule.DEFAULT.isStable(sorted(s))).isFalse();
  }

  @Test
  void shouldIgnoreAFewOutliersInTheTails() {
    long[] s = new long[50];
    Arrays.fill(s, 1000);
    s[0] = 1;
    s[1] = 50_000;
    s[2] = 90_000;
    assertThat(StabilityRule.DEFAULT.isStable(sorted(s))).isTrue();
  }

  @Test
  void shouldJudgeTheBoundaryAtExactlyFivePercent() {
    // 20 samples: the interval is ranks round(10-4.38)=6 and round(11+4.38)=15, the median rank 10
    long[] inside = new long[20];
    for (int i = 0; i < 20; i++) {
      inside[i] = i < 6 ? 950 : i < 14 ? 1000 : 1050;
    }
    assertThat(StabilityRule.medianInterval(inside)).isEqualTo(new StabilityRule.MedianInterval(950, 1000, 1050));
    assertThat(StabilityRule.DEFAULT.isStable(inside)).isTrue();
    long[] outside = inside.clone();
    for (int i = 14; i < 20; i++) {
      outside[i] = 1051;
    }
    assertThat(StabilityRule.DEFAULT.isStable(outside)).isFalse();
  }

  @Test
  void shouldRefuseNonsensicalRules() {
    assertThatThrownBy(() -> new StabilityRule(0, 10)).hasMessageContaining("relativeHalfWidth");
    assertThatThrownBy(() -> new StabilityRule(0.05, 3)).hasMessageContaining("minSamples");
  }

  @Test
  void shouldCallTheRateOfTwoAlternatingModesStableWhereTheMedianIsNot() {
    long[] runs = new long[400];
    for (int i = 0; i < runs.length; i++) {
      runs[i] = i % 2 == 0 ? 3_300_000L : 7_300_000L;
    }
    assertThat(StabilityRule.DEFAULT.isStable(sorted(runs))).isFalse();
    assertThat(StabilityRule.DEFAULT.isRateStable(runs, runs.length, 100_000_000L)).isTrue();
  }

  @Test
  void shouldNotCallARateThatDriftsBetweenBlocksStable() {
    // the first half at 1 ms a run, the second at 1.5 ms: the block means differ by 50 %
    long[] runs = new long[400];
    for (int i = 0; i < runs.length; i++) {
      runs[i] = i < 200 ? 1_000_000L : 1_500_000L;
    }
    assertThat(StabilityRule.DEFAULT.isRateStable(runs, runs.length, 10_000_000L)).isFalse();
    // the second half at 1.1 ms instead: the interval is about +-4 %, within the rate's +-10 %
    for (int i = 200; i < runs.length; i++) {
      runs[i] = 1_100_000L;
    }
    assertThat(StabilityRule.DEFAULT.isRateStable(runs, runs.length, 10_000_000L)).isTrue();
  }

  @Test
  void shouldNotJudgeTheRateOnFewerThanTenBlocksOfTheShortestLength() {
    long[] runs = new long[400];
    Arrays.fill(runs, 1_000_000L);
    assertThat(StabilityRule.DEFAULT.isRateStable(runs, runs.length, 40_000_000L)).isTrue();
    assertThat(StabilityRule.DEFAULT.isRateStable(runs, runs.length, 41_000_000L)).isFalse();
    assertThat(StabilityRule.DEFAULT.isRateStable(runs, 19, 1L)).as("fewer than two runs a block").isFalse();
  }

  @Test
  void shouldNotJudgeTheRateWhenOneRunIsLongerThanABlock() {
    long[] runs = new long[100];
    Arrays.fill(runs, 1_000_000L);
    runs[50] = 500_000_000L;
    assertThat(StabilityRule.DEFAULT.isRateStable(runs, runs.length, 1L)).isFalse();
  }
}

package io.partita.profiler.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LatencySummaryTest {

  @Test
  void shouldUseNearestRankPercentiles() {
    long[] sorted = new long[100];
    for (int i = 0; i < 100; i++) {
      sorted[i] = i + 1; // 1..100
    }
    assertThat(LatencySummary.percentile(sorted, 50)).isEqualTo(50);
    assertThat(LatencySummary.percentile(sorted, 90)).isEqualTo(90);
    assertThat(LatencySummary.percentile(sorted, 99)).isEqualTo(99);
    assertThat(LatencySummary.percentile(sorted, 100)).isEqualTo(100);
    assertThat(LatencySummary.percentile(sorted, 0.1)).isEqualTo(1);
  }

  @Test
  void shouldReportObservedSamplesOnlyForSmallSets() {
    long[] sorted = {10, 20, 30};
    assertThat(LatencySummary.percentile(sorted, 50)).isEqualTo(20);
    assertThat(LatencySummary.percentile(sorted, 90)).isEqualTo(30);
    assertThat(LatencySummary.percentile(sorted, 99)).isEqualTo(30);
  }

  @Test
  void shouldSummariseUnsortedSamplesWithoutModifyingThem() {
    long[] samples = {5, 1, 4, 2, 3};
    LatencySummary s = LatencySummary.of(samples);
    assertThat(samples).containsExactly(5, 1, 4, 2, 3);
    assertThat(s.samples()).isEqualTo(5);
    assertThat(s.p50Nanos()).isEqualTo(3);
    assertThat(s.meanNanos()).isEqualTo(3.0);
    assertThat(s.minNanos()).isEqualTo(1);
    assertThat(s.maxNanos()).isEqualTo(5);
    assertThat(s.totalNanos()).isEqualTo(15);
    assertThat(s.p50Nanos()).isLessThanOrEqualTo(s.p90Nanos());
    assertThat(s.p90Nanos()).isLessThanOrEqualTo(s.p99Nanos());
  }

  @Test
  void shouldConvertToMillis() {
    LatencySummary s = LatencySummary.of(new long[] {2_500_000});
    assertThat(s.p50Millis()).isEqualTo(2.5);
    assertThat(s.meanMillis()).isEqualTo(2.5);
  }

  @Test
  void shouldRefuseEmptySamplesAndBadPercent() {
    assertThatThrownBy(() -> LatencySummary.of(new long[0])).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LatencySummary.percentile(new long[] {1}, 0)).hasMessageContaining("percent");
    assertThatThrownBy(() -> LatencySummary.percentile(new long[] {1}, 101)).hasMessageContaining("percent");
  }
}

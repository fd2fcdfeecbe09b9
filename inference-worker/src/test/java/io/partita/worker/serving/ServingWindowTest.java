package io.partita.worker.serving;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The serving evidence of a slot: the runs of its last window, by size, from when it opened. */
class ServingWindowTest {

  @Test
  void shouldSumTheRunsOfTheWindowBySize() {
    ServingWindow window = new ServingWindow(30_000, 0);
    window.record(1_500, 1, 2_000_000);
    window.record(1_700, 1, 3_000_000);
    window.record(2_100, 4, 7_000_000);

    ServingWindow.Snapshot s = window.snapshot(10_000);

    assertThat(s.items()).isEqualTo(6);
    assertThat(s.batches()).isEqualTo(3);
    assertThat(s.busyNanos()).isEqualTo(12_000_000);
    assertThat(s.bySize()).isEqualTo(Map.of(1, new ServingWindow.Runs(2, 5_000_000), 4, new ServingWindow.Runs(1, 7_000_000)));
    assertThat(s.windowMs()).as("from when the slot opened").isEqualTo(10_000);
  }

  @Test
  void shouldForgetRunsOlderThanTheWindowAndSayWhichSpanItCovers() {
    ServingWindow window = new ServingWindow(30_000, 0);
    window.record(5_000, 2, 1_000_000);
    window.record(40_000, 3, 1_000_000);

    ServingWindow.Snapshot s = window.snapshot(50_400);

    assertThat(s.bySize()).containsOnlyKeys(3);
    assertThat(s.items()).isEqualTo(3);
    assertThat(s.windowMs()).as("29 whole seconds and the current one's 400 ms").isEqualTo(29_400);
    assertThat(window.snapshot(100_000).batches()).as("nothing ran in the last window").isZero();
  }

  @Test
  void shouldReuseABucketForANewSecondWithoutItsOldRuns() {
    ServingWindow window = new ServingWindow(3_000, 0);
    window.record(1_000, 1, 10);
    window.record(4_000, 1, 20); // the same bucket index, three seconds on

    ServingWindow.Snapshot s = window.snapshot(4_500);

    assertThat(s.batches()).isEqualTo(1);
    assertThat(s.busyNanos()).isEqualTo(20);
  }

  @Test
  void shouldForgetTheRunsBeforeAResetAndCoverOnlyTheSpanSinceIt() {
    ServingWindow window = new ServingWindow(30_000, 0);
    window.record(1_500, 1, 2_000_000); // a synthetic warm-up, say
    window.record(2_500, 8, 9_000_000);
    window.reset(3_000);
    window.record(4_200, 2, 1_000_000);

    ServingWindow.Snapshot s = window.snapshot(10_000);

    assertThat(s.bySize()).isEqualTo(Map.of(2, new ServingWindow.Runs(1, 1_000_000)));
    assertThat(s.items()).isEqualTo(2);
    assertThat(s.windowMs()).as("from the reset").isEqualTo(7_000);
    window.reset(11_000);
    assertThat(window.snapshot(11_500).batches()).isZero();
    assertThat(window.snapshot(11_500).windowMs()).isEqualTo(500);
  }

  @Test
  void shouldNotCountRunsWithNothingInThem() {
    ServingWindow window = new ServingWindow(30_000, 0);
    window.record(1_000, 0, 10);
    assertThat(window.snapshot(2_000).batches()).isZero();
    assertThatThrownBy(() -> new ServingWindow(10, 0)).hasMessageContaining("windowMs");
  }
}

package io.partita.worker.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class OffsetTrackerTest {

  @Test
  void shouldCommitOnlyBelowTheLowestUnansweredOffset() {
    OffsetTracker<String> tracker = new OffsetTracker<>();
    for (long o = 10; o < 15; o++) {
      tracker.received("p0", o);
    }
    tracker.answered("p0", 11);
    tracker.answered("p0", 13);
    assertThat(tracker.takeCommittable()).isEmpty(); // 10 is still open: nothing moved past it
    tracker.answered("p0", 10);
    assertThat(tracker.takeCommittable()).containsExactly(Map.entry("p0", 12L));
    tracker.answered("p0", 12);
    tracker.answered("p0", 14);
    assertThat(tracker.takeCommittable()).containsExactly(Map.entry("p0", 15L));
    assertThat(tracker.takeCommittable()).isEmpty();
    assertThat(tracker.open()).isZero();
  }

  @Test
  void shouldKeepPartitionsApart() {
    OffsetTracker<String> tracker = new OffsetTracker<>();
    tracker.received("p0", 0);
    tracker.received("p1", 0);
    tracker.received("p1", 1);
    tracker.answered("p1", 0);
    assertThat(tracker.takeCommittable()).containsExactly(Map.entry("p1", 1L));
    assertThat(tracker.open(List.of("p0"))).isEqualTo(1);
    assertThat(tracker.open(List.of("p1"))).isEqualTo(1);
  }

  @Test
  void shouldGiveTheCommittableOffsetAgainForASynchronousCommit() {
    OffsetTracker<String> tracker = new OffsetTracker<>();
    tracker.received("p0", 5);
    tracker.answered("p0", 5);
    assertThat(tracker.takeCommittable()).containsExactly(Map.entry("p0", 6L));
    assertThat(tracker.committable(List.of("p0", "never-read"))).containsExactly(Map.entry("p0", 6L));
  }

  @Test
  void shouldIgnoreAnswersForForgottenPartitions() {
    OffsetTracker<String> tracker = new OffsetTracker<>();
    tracker.received("p0", 0);
    tracker.forget(List.of("p0"));
    tracker.answered("p0", 0);
    assertThat(tracker.open()).isZero();
    assertThat(tracker.takeCommittable()).isEmpty();
  }

  @Test
  void shouldNeverCommitPastAnUnansweredOffsetInAnyOrder() {
    Random random = new Random(42);
    for (int round = 0; round < 200; round++) {
      OffsetTracker<String> tracker = new OffsetTracker<>();
      int n = 1 + random.nextInt(40);
      List<Long> order = new java.util.ArrayList<>();
      for (long o = 0; o < n; o++) {
        tracker.received("p", o);
        order.add(o);
      }
      java.util.Collections.shuffle(order, random);
      TreeSet<Long> unanswered = new TreeSet<>(order);
      long lastCommitted = 0;
      for (long o : order) {
        tracker.answered("p", o);
        unanswered.remove(o);
        Long commit = tracker.takeCommittable().get("p");
        long expected = unanswered.isEmpty() ? n : unanswered.first();
        if (commit != null) {
          assertThat(commit).isEqualTo(expected).isGreaterThan(lastCommitted);
          lastCommitted = commit;
        } else {
          assertThat(lastCommitted).isEqualTo(expected);
        }
      }
      assertThat(lastCommitted).isEqualTo(n);
    }
  }
}

package io.partita.worker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.worker.kafka.ReshareLog.Notice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ReshareLogTest {

  @ParameterizedTest(name = "a first re-share moving the share by {0}: INFO {1}")
  @CsvSource({
      "0.0, false",
      "0.05, false",
      "0.10, false", // the margin itself is noise, as the planner's hysteresis treats it
      "0.11, true",
      "0.5, true",
      "1.0, true"})
  void shouldLogAFirstReshareAtInfoOnlyWhenTheShareMovesByMoreThanTheMargin(double move, boolean info) {
    assertThat(new ReshareLog().next(1_000, move).info()).isEqualTo(info);
  }

  @Test
  void shouldLogAtMostOneInfoLineAMinuteAndCountTheOthers() {
    ReshareLog log = new ReshareLog();
    long t = 10_000;
    assertThat(log.next(t, 1.0)).isEqualTo(new Notice(true, 0));
    // the first minute of a worker: a large move every 5 s
    for (int i = 1; i <= 11; i++) {
      assertThat(log.next(t + i * 5_000L, 1.0).info()).as("re-share %d, %d s after the INFO line", i, i * 5).isFalse();
    }
    assertThat(log.next(t + 60_000, 1.0)).as("a minute after the last INFO line").isEqualTo(new Notice(true, 11));
    assertThat(log.next(t + 65_000, 0.5).info()).isFalse();
    // a small move is never worth an INFO line, however long since the last one
    assertThat(log.next(t + 600_000, 0.05).info()).isFalse();
    assertThat(log.next(t + 600_001, 0.3)).isEqualTo(new Notice(true, 2));
  }
}

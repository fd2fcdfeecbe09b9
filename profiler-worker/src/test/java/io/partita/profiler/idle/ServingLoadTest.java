package io.partita.profiler.idle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The host's serving load folded from slot statuses, and when it counts as idle. */
class ServingLoadTest {
  private static final long NOW = 1_000_000;
  /** At most 1 request in flight or queued, at most 2 answered per second, statuses up to 30 s old. */
  private static final IdleSettings SETTINGS = new IdleSettings(true, 1, 2.0, 10_000, 30_000);

  private static SlotLoad status(String slot, String health, int inFlight, int queued, long answered, long at) {
    return new SlotLoad(slot, health, inFlight, queued, answered, at);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("no status at all: a spare host", List.of(), MeasuringCondition.NO_SERVING),
        Arguments.of("only stopped and failed slots", List.of(status("s0", "STOPPED", 0, 0, 9, NOW),
            status("s1", "FAILED", 0, 0, 0, NOW)), MeasuringCondition.NO_SERVING),
        Arguments.of("a ready slot whose status is older than the stale bound", List.of(
            status("s0", "READY", 5, 5, 0, NOW - 30_001)), MeasuringCondition.NO_SERVING),
        Arguments.of("one ready slot with nothing in flight", List.of(status("s0", "READY", 0, 0, 0, NOW)),
            MeasuringCondition.IDLE),
        Arguments.of("in flight plus queued at the bound", List.of(status("s0", "READY", 1, 0, 0, NOW),
            status("s1", "DEGRADED", 0, 0, 0, NOW)), MeasuringCondition.IDLE),
        Arguments.of("in flight plus queued over the bound, summed over slots", List.of(
            status("s0", "READY", 1, 0, 0, NOW), status("s1", "READY", 0, 1, 0, NOW)), null),
        Arguments.of("a starting slot counts: it is loading its session", List.of(
            status("s0", "STARTING", 0, 2, 0, NOW)), null),
        Arguments.of("rate at the bound: 20 answered in 10 s", List.of(status("s0", "READY", 0, 0, 100, NOW - 10_000),
            status("s0", "READY", 0, 0, 120, NOW)), MeasuringCondition.IDLE),
        Arguments.of("rate over the bound: 30 answered in 10 s", List.of(status("s0", "READY", 0, 0, 100, NOW - 10_000),
            status("s0", "READY", 0, 0, 130, NOW)), null),
        Arguments.of("a late, older status is ignored", List.of(status("s0", "READY", 0, 0, 130, NOW),
            status("s0", "READY", 9, 9, 100, NOW - 10_000)), MeasuringCondition.IDLE),
        Arguments.of("a counter that went down (worker restarted) has no rate yet", List.of(
            status("s0", "READY", 0, 0, 5000, NOW - 1000), status("s0", "READY", 0, 0, 3, NOW)), MeasuringCondition.IDLE));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void shouldSayWhetherTheHostIsIdleEnough(String what, List<SlotLoad> statuses, MeasuringCondition expected) {
    ServingLoad load = new ServingLoad();
    statuses.forEach(load::update);

    assertThat(load.read(NOW, SETTINGS).condition()).isEqualTo(expected);
  }

  @Test
  void shouldSumInFlightAndRatesOverLiveSlotsOnly() {
    ServingLoad load = new ServingLoad();
    load.update(status("s0", "READY", 2, 1, 0, NOW - 2000));
    load.update(status("s0", "READY", 2, 1, 10, NOW - 1000)); // 10/s
    load.update(status("s1", "READY", 1, 0, 50, NOW - 4000));
    load.update(status("s1", "READY", 1, 0, 60, NOW)); // 2.5/s
    load.update(status("s2", "STOPPED", 7, 7, 0, NOW));

    ServingLoad.Reading r = load.read(NOW, SETTINGS);

    assertThat(r.liveSlots()).isEqualTo(2);
    assertThat(r.inFlight()).isEqualTo(4);
    assertThat(r.ratePerSecond()).isCloseTo(12.5, offset(1e-9));
    assertThat(r.idle()).isFalse();
  }

  @Test
  void shouldForgetASlotWhoseStatusWasDeleted() {
    ServingLoad load = new ServingLoad();
    load.update(status("s0", "READY", 3, 0, 0, NOW));

    load.remove("s0");

    assertThat(load.read(NOW, SETTINGS).condition()).isEqualTo(MeasuringCondition.NO_SERVING);
  }
}

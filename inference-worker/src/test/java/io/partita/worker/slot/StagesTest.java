package io.partita.worker.slot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StagesTest {
  @Test
  void shouldSpanEveryRunOfARequestCutIntoParts() {
    Stages stages = Stages.readNow();
    stages.decoded();

    stages.ran(2_000, 3_000);
    stages.ran(1_500, 2_500);
    stages.ran(4_000, 5_000);

    Map<String, Long> stamps = SplitRequestsTest.parse(stages.header());
    assertThat(stamps.get("run-start")).isEqualTo(1_500);
    assertThat(stamps.get("run-end")).isEqualTo(5_000);
  }

  @Test
  void shouldLeaveOutTheRunStampsOfARequestAnsweredWithoutRunning() {
    Stages stages = Stages.readNow();
    stages.decoded();

    Map<String, Long> stamps = SplitRequestsTest.parse(stages.header());

    assertThat(List.copyOf(stamps.keySet())).containsExactly("read", "decoded", "encoded");
    assertThat(stamps.get("read")).isLessThanOrEqualTo(stamps.get("decoded"));
    assertThat(stamps.get("decoded")).isLessThanOrEqualTo(stamps.get("encoded"));
  }
}

package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class StageTimesTest {
  private static final String WORKER = "read=1200;decoded=1250;run-start=1400;run-end=1900;encoded=1950";

  @Test
  void shouldSplitARoundTripIntoTheStagesItsStampsBound() {
    Long[] s = StageTimes.stages(new StageTimes.Call(1000, 2600), new StageTimes.Reply(1100, 2300, WORKER));

    assertThat(s).containsExactly(100L, 100L, 50L, 150L, 500L, 50L, 350L, 300L);
  }

  @Test
  void shouldEndClientProduceAtTheWorkersReadWhenTheAcknowledgementCameLater() {
    Long[] s = StageTimes.stages(new StageTimes.Call(1000, 2600), new StageTimes.Reply(1300, 2300, WORKER));

    assertThat(s[0]).isEqualTo(200L);
    assertThat(s[1]).isEqualTo(0L);
  }

  @Test
  void shouldLeaveOutRunStagesOfARequestAnsweredWithoutRunningAndCallsWithoutStamps() {
    Long[] s = StageTimes.stages(new StageTimes.Call(1000, 2000), new StageTimes.Reply(0, 1800, "read=1200;decoded=1250;encoded=1300"));

    assertThat(s[0]).isNull();
    assertThat(s[3]).isNull();
    assertThat(s[4]).isNull();
    assertThat(s[6]).isEqualTo(500L);
    assertThat(StageTimes.stages(new StageTimes.Call(1, 2), new StageTimes.Reply(0, 2, null))).isNull();
  }

  @Test
  void shouldGiveTheMedianOfEachStageOverTheCallsThatHaveAllTheirStamps() {
    StageTimes times = new StageTimes();
    times.call("a", 1000, 2600);
    times.reply("a", 1100, 2300, WORKER);
    times.call("b", 1000, 3600);
    times.reply("b", 1100, 3300, WORKER);
    times.call("c", 1000, 9999); // its reply never reached the client's loop: left out
    times.call("d", 1000, 2600);
    times.reply("d", 1100, 2300, WORKER);

    StageTimes.Summary summary = times.summary();

    assertThat(summary.calls()).isEqualTo(3);
    assertThat(summary.medianMs()[4]).isCloseTo(0.5, within(1e-9));
    assertThat(summary.medianMs()[6]).isCloseTo(0.35, within(1e-9));
    assertThat(summary.totalMedianMs()).isCloseTo(1.6, within(1e-9));
  }
}

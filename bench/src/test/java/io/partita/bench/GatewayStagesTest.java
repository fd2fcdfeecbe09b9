package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class GatewayStagesTest {

  @Test
  void shouldTakeTheMedianOfEachStageAndOfWhatLiesOutsideTheGateway() {
    GatewayStages stages = new GatewayStages();
    stages.start();
    stages.call("queue;dur=0.100, decode;dur=0.200, produce;dur=0.050, kafka;dur=2.000, encode;dur=0.050", 3_000_000);
    stages.call("queue;dur=0.300, decode;dur=0.200, produce;dur=0.050, kafka;dur=4.000, encode;dur=0.050", 5_000_000);
    stages.call("queue;dur=0.200, decode;dur=0.400, produce;dur=0.050, kafka;dur=3.000, encode;dur=0.150", 10_000_000);
    stages.stop();
    stages.call("queue;dur=99, decode;dur=99, produce;dur=99, kafka;dur=99, encode;dur=99", 500_000_000); // after the window

    GatewayStages.Summary s = stages.summary();

    assertThat(s.calls()).isEqualTo(3);
    assertThat(s.medianMs()).containsExactly(new double[] {0.2, 0.2, 0.05, 3.0, 0.05}, within(1e-9));
    // outside per call: 3 - 2.4 = 0.6, 5 - 4.6 = 0.4, 10 - 3.8 = 6.2
    assertThat(s.outsideMs()).isCloseTo(0.6, within(1e-9));
    assertThat(s.roundTripMs()).isCloseTo(5.0, within(1e-9));
  }

  @Test
  void shouldLeaveAStageNobodyReportedAsNotANumber() {
    GatewayStages stages = new GatewayStages();
    stages.start();
    stages.call("queue;dur=0.100, kafka;dur=1.000", 2_000_000);
    stages.call(null, 2_000_000); // an answer without the header: not counted

    GatewayStages.Summary s = stages.summary();

    assertThat(s.calls()).isEqualTo(1);
    assertThat(s.medianMs()[GatewayStages.STAGES.indexOf("decode")]).isNaN();
    assertThat(s.outsideMs()).isCloseTo(0.9, within(1e-9));
    assertThat(s.sumOfMediansMs()).isCloseTo(1.1, within(1e-9));
  }
}

package io.partita.gateway.infer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ServerTimingTest {

  @ParameterizedTest(name = "{0} ns -> {1}")
  @CsvSource({
      "0, 0.000",
      "999, 0.000",
      "50000, 0.050",
      "1234567, 1.234",
      "10000000, 10.000",
      "12345678901, 12345.678",
      "-5000, 0.000",
  })
  void shouldWriteMillisecondsWithThreeDecimalsAndNeverNegative(long nanos, String expected) {
    StringBuilder out = new StringBuilder();
    ServerTiming.append(out, "kafka", nanos);
    assertThat(out).hasToString("kafka;dur=" + expected);
  }

  @Test
  void shouldListEveryStageInOrderWhenAllStampsAreThere() {
    String value = ServerTiming.format(1_000_000, 1_050_000, 1_170_000, 1_200_000, 6_000_000, 6_090_000);
    assertThat(value).isEqualTo("queue;dur=0.050, decode;dur=0.120, produce;dur=0.030, kafka;dur=4.800, encode;dur=0.090");
  }

  @Test
  void shouldCarryOnlyTheStagesThatRanOnARefusalBeforeProducing() {
    assertThat(ServerTiming.format(1_000_000, 1_250_000, 0, 0, 0, 0)).isEqualTo("queue;dur=0.250");
  }

  @Test
  void shouldStopAtKafkaWhenTheReplyFailedBeforeAnAnswerWasEncoded() {
    assertThat(ServerTiming.format(1_000_000, 1_100_000, 1_200_000, 1_300_000, 21_300_000, 0))
        .isEqualTo("queue;dur=0.100, decode;dur=0.100, produce;dur=0.100, kafka;dur=20.000");
  }

  @Test
  void shouldFoldProduceIntoKafkaWhenTheReplyCameBeforeSendReturned() {
    // send() returned (1.6 ms) after the reply (1.5 ms) had come: the stages still add up, with no negative one
    String value = ServerTiming.format(1_000_000, 1_100_000, 1_200_000, 1_600_000, 1_500_000, 1_700_000);
    assertThat(value).isEqualTo("queue;dur=0.100, decode;dur=0.100, kafka;dur=0.300, encode;dur=0.200");
    assertThat(ServerTiming.format(1_000_000, 1_100_000, 1_200_000, 0, 1_500_000, 1_700_000))
        .isEqualTo("queue;dur=0.100, decode;dur=0.100, kafka;dur=0.300, encode;dur=0.200");
  }

  @Test
  void shouldReadBackWhatItWrites() {
    ServerTiming timing = new ServerTiming(System.nanoTime()).handling(System.nanoTime());
    timing.producing();
    timing.produced();
    timing.replied();
    timing.encoded();
    assertThat(ServerTiming.parse(timing.header())).containsOnlyKeys(ServerTiming.STAGES);
    assertThat(ServerTiming.parse("queue;dur=0.050, decode;desc=\"x\";dur=1.5, bad;dur=x, nodur, kafka;dur=4.8"))
        .containsExactly(entry("queue", 0.05), entry("decode", 1.5), entry("kafka", 4.8));
    assertThat(ServerTiming.parse(null)).isEmpty();
  }
}

package io.partita.gateway.infer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AnsweredByTest {
  @Test
  void shouldSplitAReplysInstanceIntoHostAndSlot() {
    assertThat(AnsweredBy.of("host-1/cpu-0")).isEqualTo(new AnsweredBy("host-1", "cpu-0"));
    assertThat(AnsweredBy.of("rack/7/host-2/gpu-1")).isEqualTo(new AnsweredBy("rack/7/host-2", "gpu-1"));
  }

  @Test
  void shouldNameNoPlaceForAReplyWithoutOne() {
    assertThat(AnsweredBy.of(null)).isNull();
    assertThat(AnsweredBy.of("no-slash")).isNull();
    assertThat(AnsweredBy.of("/cpu-0")).isNull();
    assertThat(AnsweredBy.of("host-1/")).isNull();
  }
}

package io.partita.gateway.limits;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CapacityTest {
  @Test
  void shouldRefuseOnlineCallsPastTheLimitAndTakeThemAgainWhenSlotsFree() {
    Capacity c = new Capacity(2, 0.5);
    assertThat(c.tryOnline()).isTrue();
    assertThat(c.tryOnline()).isTrue();
    assertThat(c.tryOnline()).isFalse();
    c.releaseOnline();
    assertThat(c.tryOnline()).isTrue();
  }

  @Test
  void shouldKeepJobsToTheirShareSoOnlineTrafficAlwaysHasTheRest() {
    Capacity c = new Capacity(10, 0.3);
    assertThat(c.jobLimit()).isEqualTo(3);
    int jobs = 0;
    while (c.tryJob()) {
      jobs++;
    }
    assertThat(jobs).isEqualTo(3);
    int online = 0;
    while (c.tryOnline()) {
      online++;
    }
    assertThat(online).isEqualTo(7);
  }

  @Test
  void shouldNotGiveJobsASlotWhileOnlineCallsFillTheGateway() throws InterruptedException {
    Capacity c = new Capacity(4, 0.5);
    for (int i = 0; i < 4; i++) {
      assertThat(c.tryOnline()).isTrue();
    }
    assertThat(c.awaitJob(10)).isFalse();
    c.releaseOnline();
    assertThat(c.awaitJob(10)).isTrue();
    assertThat(c.jobs()).isEqualTo(1);
  }

  @Test
  void shouldGiveJobsAtLeastOneSlot() {
    assertThat(new Capacity(1, 0.1).jobLimit()).isEqualTo(1);
  }
}

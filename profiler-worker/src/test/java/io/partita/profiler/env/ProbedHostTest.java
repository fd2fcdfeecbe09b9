package io.partita.profiler.env;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ProbedHostTest {

  private static ProbedHost host(int usableCores, Double quotaCores) {
    List<Integer> ids = usableCores == 1 ? List.of(0) : List.of(0, 1);
    return new ProbedHost("h", "cpu", List.of(), 2, 2, usableCores, ids, quotaCores, 1L << 30, null, List.of(),
        "1.0", List.of("CPU"), "Linux", "6", "amd64", "17", null);
  }

  @Test
  void shouldKeepTheBudgetOfAHostWithoutAQuotaOrWithAQuotaOfWholeCores() {
    assertThat(host(2, null).wallBudgetMillis(100)).isEqualTo(100);
    assertThat(host(2, 2.0).wallBudgetMillis(100)).isEqualTo(100);
    assertThat(host(1, 1.5).wallBudgetMillis(2000)).isEqualTo(2000);
  }

  @Test
  void shouldStretchTheBudgetByTheQuotaSoAPointGetsTheSameCpuTime() {
    assertThat(host(1, 0.2).wallBudgetMillis(2000)).isEqualTo(10_000);
    assertThat(host(1, 0.5).wallBudgetMillis(2000)).isEqualTo(4000);
  }

  @Test
  void shouldGiveAPointAtLeastFiveQuotaPeriodsUnderAQuota() {
    // A 100 ms point at 0.6 of a core would be 167 ms: under two periods, too short to meet the throttle.
    assertThat(host(1, 0.6).wallBudgetMillis(100)).isEqualTo(500);
    assertThat(host(1, 0.2).wallBudgetMillis(100)).isEqualTo(500);
  }
}

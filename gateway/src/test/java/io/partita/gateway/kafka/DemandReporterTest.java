package io.partita.gateway.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DemandReporterTest {
  @Test
  void shouldRoundRatesToTwoSignificantFiguresSoJitterDoesNotReplan() {
    assertThat(DemandReporter.rounded(0)).isZero();
    assertThat(DemandReporter.rounded(123.4)).isCloseTo(120.0, org.assertj.core.api.Assertions.within(1e-9));
    assertThat(DemandReporter.rounded(118.9)).isCloseTo(120.0, org.assertj.core.api.Assertions.within(1e-9));
    assertThat(DemandReporter.rounded(0.0456)).isCloseTo(0.046, org.assertj.core.api.Assertions.within(1e-12));
    assertThat(DemandReporter.rounded(7)).isCloseTo(7.0, org.assertj.core.api.Assertions.within(1e-9));
    assertThat(DemandReporter.rounded(Double.NaN)).isZero();
  }
}

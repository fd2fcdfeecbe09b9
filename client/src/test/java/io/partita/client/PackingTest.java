package io.partita.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The packing settings a client is given: their defaults and what is refused, naming the setting. */
class PackingTest {
  @Test
  void shouldKeepOneRequestOfAKindInFlightByDefault() {
    PartitaClient.Config config = PartitaClient.Config.of("localhost:9092").withPacking(64, Duration.ofMillis(1));
    assertThat(config.packing().inFlight()).isEqualTo(1);
    assertThat(config.withPacking(new PartitaClient.Packing(64, Duration.ofMillis(1), 2)).packing().inFlight()).isEqualTo(2);
  }

  @Test
  void shouldRefuseSettingsOutOfRangeNamingThem() {
    assertThatThrownBy(() -> new PartitaClient.Packing(64, Duration.ofMillis(1), 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("packing inFlight must be 1 to 64, got 0");
    assertThatThrownBy(() -> new PartitaClient.Packing(64, Duration.ofMillis(1), 65))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got 65");
    assertThatThrownBy(() -> new PartitaClient.Packing(1, Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRows must be 2 to 65536, got 1");
    assertThatThrownBy(() -> new PartitaClient.Packing(64, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be negative");
  }
}

package io.partita.worker.serving;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class SessionSpecTest {

  @Test
  void shouldPinEveryPoolThreadButTheCallersWithOneBasedIds() {
    assertThat(new SessionSpec(false, -1, List.of(4, 5, 6), 3).intraOpAffinities()).isEqualTo("6;7");
    assertThat(new SessionSpec(false, -1, List.of(0, 1), 2).intraOpAffinities()).isEqualTo("2");
    assertThat(new SessionSpec(false, -1, List.of(3), 1).intraOpAffinities()).isEmpty();
    assertThat(new SessionSpec(false, -1, List.of(), 0).intraOpAffinities()).isEmpty();
  }

  @Test
  void shouldRunOneThreadPerPinnedCpu() {
    assertThatThrownBy(() -> new SessionSpec(false, -1, List.of(0, 1), 4)).hasMessageContaining("one thread per CPU");
  }
}

package io.partita.profiler.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.profiler.env.ProviderProbe.Provider;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotSpecTest {

  @Test
  void shouldWriteOneBasedAffinitiesForEveryThreadButTheCaller() {
    assertThat(SlotSpec.cpu(List.of(4, 5, 6)).intraOpAffinities()).isEqualTo("6;7");
    assertThat(SlotSpec.cpu(List.of(0, 1)).intraOpAffinities()).isEqualTo("2");
    assertThat(SlotSpec.cpu(List.of(3)).intraOpAffinities()).isEmpty();
    assertThat(SlotSpec.cpuUnpinned(4).intraOpAffinities()).isEmpty();
  }

  @Test
  void shouldSpinOnlyWhenEveryThreadHasItsOwnCore() {
    assertThat(SlotSpec.cpu(List.of(0, 1)).spinning()).isTrue();
    assertThat(SlotSpec.cpuUnpinned(4).spinning()).isFalse();
    assertThat(SlotSpec.gpu(0).threads()).isEqualTo(1);
  }

  @Test
  void shouldRefuseInconsistentSlots() {
    assertThatThrownBy(() -> new SlotSpec(Provider.CPU, List.of(0), 2, -1, true)).hasMessageContaining("one CPU per thread");
    assertThatThrownBy(() -> new SlotSpec(Provider.CPU, List.of(), 1, 0, false)).hasMessageContaining("GPU device");
    assertThatThrownBy(() -> new SlotSpec(Provider.CUDA, List.of(), 1, -1, false)).hasMessageContaining("GPU device");
  }
}

package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class SlotConfigTest {

  @Test
  void shouldWriteOneBasedAffinitiesForEveryThreadButTheCaller() {
    assertThat(SlotConfig.pinned(List.of(4, 5, 6), true).intraOpAffinities()).isEqualTo("6;7");
    assertThat(SlotConfig.pinned(List.of(0, 1), true).intraOpAffinities()).isEqualTo("2");
    assertThat(SlotConfig.pinned(List.of(3), true).intraOpAffinities()).isEmpty();
    assertThat(SlotConfig.unpinned(4).intraOpAffinities()).isEmpty();
    assertThat(SlotConfig.cuda(0).intraOpAffinities()).isEmpty();
  }

  @Test
  void shouldSpinOnlyOnAPinnedPartitionThatAllowsIt() {
    assertThat(SlotConfig.pinned(List.of(0, 1), true).spinning()).isTrue();
    assertThat(SlotConfig.pinned(List.of(0, 1), false).spinning()).isFalse();
    assertThat(SlotConfig.unpinned(4).spinning()).isFalse();
    assertThat(SlotConfig.cuda(0).spinning()).isFalse();
    assertThatThrownBy(() -> new SlotConfig(Provider.CPU, -1, List.of(), 2, true))
        .hasMessageContaining("only a pinned CPU slot may spin");
  }

  @Test
  void shouldRefuseInconsistentSlots() {
    assertThatThrownBy(() -> new SlotConfig(Provider.CPU, -1, List.of(0), 2, true))
        .hasMessageContaining("one thread per CPU");
    assertThatThrownBy(() -> new SlotConfig(Provider.CPU, 0, List.of(), 1, false)).hasMessageContaining("device index");
    assertThatThrownBy(() -> new SlotConfig(Provider.CUDA, -1, List.of(), 1, false)).hasMessageContaining("device index");
    assertThatThrownBy(() -> new SlotConfig(Provider.CUDA, 0, List.of(1), 1, false)).hasMessageContaining("no CPU partition");
    assertThatThrownBy(() -> SlotConfig.unpinned(-1)).hasMessageContaining("threads");
    assertThatThrownBy(() -> SlotConfig.pinned(List.of(), true)).hasMessageContaining("at least one CPU");
  }

  @Test
  void shouldFallBackFromCudaToTheSameThreadsOnCpu() {
    SlotConfig cuda = new SlotConfig(Provider.CUDA, 1, List.of(), 3, false);
    assertThat(cuda.onCpu()).isEqualTo(SlotConfig.unpinned(3));
    SlotConfig cpu = SlotConfig.pinned(List.of(2), true);
    assertThat(cpu.onCpu()).isSameAs(cpu);
    assertThat(cpu.oneCore()).isTrue();
    assertThat(SlotConfig.pinned(List.of(2, 3), true).oneCore()).isFalse();
    assertThat(SlotConfig.unpinned(1).oneCore()).isFalse();
  }
}

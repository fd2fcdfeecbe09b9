package io.partita.planning;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class CoreLayoutTest {

  @Test
  void shouldLayExclusivePartitionsConsecutivelyAsBefore() {
    assertThat(CoreLayout.place(8, List.of(new CoreLayout.Block(4, 1, true), new CoreLayout.Block(2, 1, true),
        new CoreLayout.Block(2, 1, true)))).containsExactly(0, 4, 6);
  }

  @Test
  void shouldUseFreeResourcesFirstThenTheLeastLoadedOnes() {
    List<Integer> firsts = CoreLayout.place(2, List.of(new CoreLayout.Block(1, 5, true), new CoreLayout.Block(1, 1, false),
        new CoreLayout.Block(1, 1, false), new CoreLayout.Block(1, 1, false)));

    assertThat(firsts).containsExactly(0, 1, 1, 1);
  }

  @Test
  void shouldSpreadEightEqualPartitionsEvenlyOverTwoCores() {
    List<CoreLayout.Block> blocks = java.util.Collections.nCopies(8, new CoreLayout.Block(1, 1, false));

    List<Integer> firsts = CoreLayout.place(2, blocks);

    assertThat(firsts).filteredOn(f -> f == 0).hasSize(4);
    assertThat(firsts).filteredOn(f -> f == 1).hasSize(4);
  }

  @Test
  void shouldKeepAWidePartitionInsideThePool() {
    assertThat(CoreLayout.place(4, List.of(new CoreLayout.Block(4, 1, true), new CoreLayout.Block(2, 1, false))))
        .containsExactly(0, 0);
  }
}

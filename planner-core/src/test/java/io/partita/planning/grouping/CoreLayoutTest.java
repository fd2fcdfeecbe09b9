package io.partita.planning.grouping;

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

  /** Twelve shared partitions on four cores, their weights (demand x time) jittered by up to 5 %. */
  @Test
  void shouldKeepTheRunningLayoutWhileWeightsOnlyJitter() {
    java.util.Random random = new java.util.Random(4);
    double[] base = {9, 8, 7, 6, 5, 5, 4, 3, 3, 2, 2, 1};
    List<Integer> running = CoreLayout.place(4, blocks(base, random, 0));
    int freshMoved = 0;
    for (int round = 0; round < 50; round++) {
      List<CoreLayout.Block> jittered = blocks(base, random, 0.05);
      assertThat(CoreLayout.place(4, jittered, running, 0.10)).as("round %d", round).isEqualTo(running);
      freshMoved += CoreLayout.place(4, jittered).equals(running) ? 0 : 1;
    }
    assertThat(freshMoved).as("rounds where a fresh layout would have moved partitions").isPositive();
  }

  @Test
  void shouldTakeAFreshLayoutThatLowersTheBusiestCoreByMoreThanTheMargin() {
    List<CoreLayout.Block> blocks = List.of(new CoreLayout.Block(1, 5, false), new CoreLayout.Block(1, 5, false));
    // Both on core 0 (load 10); the fresh layout puts them apart (load 5).
    assertThat(CoreLayout.place(2, blocks, List.of(0, 0), 0.10)).containsExactly(0, 1);
    // A running layout that no longer fits the blocks (or is not theirs) is not kept.
    assertThat(CoreLayout.place(2, blocks, List.of(0, 3), 0.10)).containsExactly(0, 1);
    assertThat(CoreLayout.place(2, blocks, List.of(0), 0.10)).containsExactly(0, 1);
  }

  private static List<CoreLayout.Block> blocks(double[] weights, java.util.Random random, double jitter) {
    List<CoreLayout.Block> out = new java.util.ArrayList<>();
    for (double w : weights) {
      out.add(new CoreLayout.Block(1, w * (1 + jitter * (2 * random.nextDouble() - 1)), false));
    }
    return out;
  }
}

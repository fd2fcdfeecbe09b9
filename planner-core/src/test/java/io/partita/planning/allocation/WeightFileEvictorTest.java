package io.partita.planning.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class WeightFileEvictorTest {

  private static MountedWeight mounted(String sha, long size, long lastUsed, boolean inUse) {
    return new MountedWeight(new WeightFile("w/" + sha, sha, size), lastUsed, inUse);
  }

  @Test
  void shouldUnmountLeastRecentlyUsedFirstAndStopWhenEnoughIsFree() {
    List<MountedWeight> mounted = List.of(mounted("new", 40, 9, false), mounted("old", 30, 1, false),
        mounted("mid", 30, 5, false));

    EvictionPlan plan = WeightFileEvictor.chooseUnmounts(mounted, -10, 40);

    assertThat(plan.unmount()).extracting(WeightFile::sha256).containsExactly("old", "mid");
    assertThat(plan.freedBytes()).isEqualTo(60);
    assertThat(plan.sufficient()).isTrue();
  }

  @Test
  void shouldNeverUnmountAFileInUse() {
    List<MountedWeight> mounted = List.of(mounted("busy", 100, 0, true), mounted("idle", 10, 7, false));

    EvictionPlan plan = WeightFileEvictor.chooseUnmounts(mounted, 0, 50);

    assertThat(plan.unmount()).extracting(WeightFile::sha256).containsExactly("idle");
    assertThat(plan.sufficient()).isFalse();
    assertThat(plan.kept()).singleElement().satisfies(k -> {
      assertThat(k.sha256()).isEqualTo("busy");
      assertThat(k.reason()).isEqualTo("in use by an instance");
    });
  }

  @Test
  void shouldUnmountNothingWhenWithinBudget() {
    EvictionPlan plan = WeightFileEvictor.chooseUnmounts(List.of(mounted("a", 10, 1, false)), 5, 0);

    assertThat(plan.unmount()).isEmpty();
    assertThat(plan.sufficient()).isTrue();
  }
}

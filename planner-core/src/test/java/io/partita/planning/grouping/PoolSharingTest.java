package io.partita.planning.grouping;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PoolSharingTest {
  private static final List<ProfilePoint> PROFILE =
      List.of(new ProfilePoint(1, 10, 0), new ProfilePoint(2, 6, 0));

  private static List<ModelDemand> measured(int count, double rate) {
    List<ModelDemand> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(new ModelDemand("m" + i, rate, 1, PROFILE, null));
    }
    return out;
  }

  @ParameterizedTest(name = "{0} measured and {1} unmeasured models on {2} resources")
  @CsvSource({"3,0,2", "8,0,2", "0,3,2", "0,8,2", "2,3,2", "1,1,4", "5,5,1", "3,0,8"})
  void shouldPlaceEveryModelWhateverTheCountOfResources(int measuredCount, int unmeasuredCount, int poolSize) {
    Set<String> unmeasured = new TreeSet<>();
    for (int i = 0; i < unmeasuredCount; i++) {
      unmeasured.add("u" + i);
    }

    List<PoolPlacement> placements = PoolSharing.split(poolSize, 1 << 30, 0, Long.MAX_VALUE,
        GroupingObjective.THROUGHPUT, measured(measuredCount, 1), unmeasured);

    assertThat(placements).hasSize(measuredCount + unmeasuredCount);
    for (PoolPlacement p : placements) {
      assertThat(p.share().resources()).as(p.modelId()).isBetween(1, poolSize);
      if (p.kind() != PoolPlacement.Kind.DEFAULT) {
        assertThat(p.share().plan().planned()).as(p.modelId()).isTrue();
      }
    }
    assertThat(placements).filteredOn(p -> p.kind() == PoolPlacement.Kind.DEFAULT)
        .extracting(PoolPlacement::modelId).containsExactlyElementsOf(unmeasured);
    int exclusive = placements.stream().filter(p -> p.kind() == PoolPlacement.Kind.SPLIT)
        .mapToInt(p -> p.share().plan().choice().sizes().stream().mapToInt(Integer::intValue).sum()).sum();
    assertThat(exclusive).as("resources held by split models").isLessThanOrEqualTo(poolSize);
  }

  @ParameterizedTest(name = "{0} default models alone on {1} resources, at most {2} each: {3}")
  @CsvSource({"1,2,2,2", "1,8,2,2", "1,8,8,8", "3,8,4,3;3;2", "2,2,2,1;1", "3,2,2,1;1;1", "1,1,2,1", "2,5,1,1;1"})
  void shouldShareAPoolNoMeasuredModelWantsAmongTheDefaultModels(int defaults, int poolSize, int limit, String expected) {
    Set<String> unmeasured = new TreeSet<>();
    for (int i = 0; i < defaults; i++) {
      unmeasured.add("u" + i);
    }

    List<PoolPlacement> placements = PoolSharing.split(poolSize, 1 << 30, 0, Long.MAX_VALUE,
        GroupingObjective.THROUGHPUT, List.of(), unmeasured, limit);

    assertThat(placements).extracting(p -> String.valueOf(p.share().resources()))
        .containsExactly(expected.split(";"));
    assertThat(placements).allMatch(p -> p.kind() == PoolPlacement.Kind.DEFAULT);
  }

  @Test
  void shouldGiveDefaultModelsOneResourceEachBesideAMeasuredModel() {
    List<PoolPlacement> placements = PoolSharing.split(8, 1 << 30, 0, Long.MAX_VALUE, GroupingObjective.THROUGHPUT,
        measured(1, 10), Set.of("u0"), 4);

    assertThat(placements).filteredOn(p -> p.kind() == PoolPlacement.Kind.DEFAULT).singleElement()
        .satisfies(p -> assertThat(p.share().resources()).isEqualTo(1));
  }

  @Test
  void shouldKeepTheSplitUnchangedWhenItServesEveryModel() {
    List<ModelDemand> models = List.of(new ModelDemand("a", 30, 1, PROFILE, null), new ModelDemand("b", 10, 1, PROFILE, null));
    PoolSplitPlan split = PoolSplitter.split(new PoolSplitProblem(4, 1000, 0, Long.MAX_VALUE, GroupingObjective.THROUGHPUT, models));

    List<PoolPlacement> shared = PoolSharing.split(4, 1000, 0, Long.MAX_VALUE, GroupingObjective.THROUGHPUT, models, Set.of());

    assertThat(shared).extracting(PoolPlacement::kind).containsOnly(PoolPlacement.Kind.SPLIT);
    assertThat(shared).extracting(PoolPlacement::share).containsExactlyElementsOf(split.shares());
  }

  @Test
  void shouldShareResourcesWithAModelWithoutDemandInsteadOfLeavingItOut() {
    List<ModelDemand> models = List.of(new ModelDemand("busy", 100, 1, PROFILE, null), new ModelDemand("idle", 0, 1, PROFILE, null));

    List<PoolPlacement> placements = PoolSharing.split(2, 1000, 0, Long.MAX_VALUE, GroupingObjective.THROUGHPUT, models, Set.of());

    assertThat(placements.get(0).kind()).isEqualTo(PoolPlacement.Kind.SPLIT);
    assertThat(placements.get(0).share().resources()).isEqualTo(2);
    assertThat(placements.get(1).modelId()).isEqualTo("idle");
    assertThat(placements.get(1).kind()).isEqualTo(PoolPlacement.Kind.SHARED);
    assertThat(placements.get(1).share().plan().choice().sizes()).containsExactly(1);
  }

  @Test
  void shouldGiveDefaultModelsOwnResourcesWhileThereAreMoreResourcesThanDefaults() {
    List<PoolPlacement> placements = PoolSharing.split(4, 1000, 0, Long.MAX_VALUE, GroupingObjective.THROUGHPUT,
        measured(1, 1), Set.of("new"));

    PoolPlacement measured = placements.stream().filter(p -> p.modelId().equals("m0")).findFirst().orElseThrow();
    assertThat(measured.kind()).isEqualTo(PoolPlacement.Kind.SPLIT);
    assertThat(measured.share().resources()).as("the other 3 resources").isEqualTo(3);
  }

  @Test
  void shouldLeaveAModelUnplannedOnlyWhenNoPartitionOfItFitsAtAll() {
    List<ModelDemand> models = List.of(new ModelDemand("big", 1, 1, List.of(new ProfilePoint(1, 10, 2000)), null),
        new ModelDemand("small", 1, 1, PROFILE, null));

    List<PoolPlacement> placements = PoolSharing.split(1, 1000, 0, Long.MAX_VALUE, GroupingObjective.THROUGHPUT, models, Set.of());

    assertThat(placements.get(0).share().plan().planned()).isFalse();
    assertThat(placements.get(0).share().plan().noEligibleReason()).isNotBlank();
    assertThat(placements.get(1).share().plan().planned()).isTrue();
  }
}

package io.partita.planning.version;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class VersionSelectorTest {

  private static final long GIB = 1L << 30;

  private static final HostFacts NEW_HOST =
      new HostFacts("edge-1", Set.of("CPU"), Set.of("avx2", "fma"), 8 * GIB, 50);
  private static final HostFacts LAB_SIMILAR =
      new HostFacts("lab-cpu", Set.of("CPU"), Set.of("avx2", "fma"), 32 * GIB, 100);
  private static final HostFacts LAB_GPU =
      new HostFacts("lab-gpu", Set.of("CPU", "CUDA"), Set.of("avx2", "avx512f"), 64 * GIB, 400);

  private static final ModelVersion FP32 = new ModelVersion("v1-fp32", Set.of("CPU"), "fp32", 2 * GIB, 0.91);
  private static final ModelVersion INT8 = new ModelVersion("v1-int8", Set.of("CPU"), "int8", GIB, 0.89);
  private static final ModelVersion FP16_CUDA = new ModelVersion("v1-fp16", Set.of("CUDA"), "fp16", GIB, 0.91);
  private static final ModelVersion HUGE = new ModelVersion("v2-xl", Set.of("CPU"), "fp32", 20 * GIB, 0.95);

  private static final List<TimingObservation> LAB_TIMINGS = List.of(
      new TimingObservation("v1-fp32", "lab-cpu", 20),
      new TimingObservation("v1-int8", "lab-cpu", 8),
      new TimingObservation("v1-int8", "lab-gpu", 3),
      new TimingObservation("v1-fp32", "lab-gpu", 4),
      new TimingObservation("v1-fp16", "lab-gpu", 1),
      new TimingObservation("v2-xl", "lab-cpu", 30));

  private static VersionProblem problem(List<TimingObservation> timings, VersionRequirements req) {
    return new VersionProblem(NEW_HOST, List.of(LAB_GPU, LAB_SIMILAR), List.of(FP32, INT8, FP16_CUDA, HUGE),
        timings, req);
  }

  @Test
  void shouldPredictFromTheMostSimilarHostAndThenBeOverruledByARealMeasurement() {
    // Predicted: int8 takes 8 ms on lab-cpu (score 100) so 16 ms here (score 50); fp32 40 ms.
    VersionPlan predicted = VersionSelector.choose(problem(LAB_TIMINGS, VersionRequirements.NONE));

    assertThat(predicted.chosenVersionId()).isEqualTo("v1-int8");
    VersionOutcome chosen = predicted.outcomes().get(0);
    assertThat(chosen.predicted()).isTrue();
    assertThat(chosen.sourceHost()).isEqualTo("lab-cpu");
    assertThat(chosen.latencyMs()).isEqualTo(16.0);
    assertThat(predicted.outcomes().get(1).versionId()).isEqualTo("v1-fp32");
    assertThat(predicted.outcomes().get(1).latencyMs()).isEqualTo(40.0);

    // Then the host measures int8 itself: 45 ms (its int8 kernels are slow). The next plan corrects.
    List<TimingObservation> measured = new ArrayList<>(LAB_TIMINGS);
    measured.add(new TimingObservation("v1-int8", "edge-1", 44));
    measured.add(new TimingObservation("v1-int8", "edge-1", 45));
    measured.add(new TimingObservation("v1-int8", "edge-1", 47));
    VersionPlan corrected = VersionSelector.choose(problem(measured, VersionRequirements.NONE));

    assertThat(corrected.chosenVersionId()).isEqualTo("v1-fp32");
    VersionOutcome int8 = corrected.outcomes().stream().filter(o -> o.versionId().equals("v1-int8"))
        .findFirst().orElseThrow();
    assertThat(int8.predicted()).isFalse();
    assertThat(int8.latencyMs()).isEqualTo(45.0);
    assertThat(int8.status()).isEqualTo(VersionOutcome.Status.RUNNER_UP);
  }

  @Test
  void shouldExcludeWhatTheHostCannotRunAndSayWhy() {
    VersionPlan plan = VersionSelector.choose(problem(LAB_TIMINGS, VersionRequirements.NONE));

    assertThat(plan.outcomes()).filteredOn(o -> o.status() == VersionOutcome.Status.EXCLUDED)
        .extracting(VersionOutcome::versionId, VersionOutcome::reason)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("v1-fp16", "host cannot run it: execution provider(s) [CUDA] missing"),
            org.assertj.core.groups.Tuple.tuple("v2-xl", "host cannot run it: needs " + 20 * GIB + " B, host has "
                + 8 * GIB + " B"));
  }

  @Test
  void shouldApplyRequirementsBeforeChoosingTheFastest() {
    VersionPlan plan = VersionSelector.choose(problem(LAB_TIMINGS, new VersionRequirements(30.0, 0.9, null)));

    // int8 is fastest but below the accuracy; fp32 at 40 ms misses the objective.
    assertThat(plan.chosenVersionId()).isNull();
    assertThat(plan.noChoiceReason()).contains("no candidate version qualifies");
    assertThat(plan.outcomes()).extracting(VersionOutcome::reason)
        .anyMatch(r -> r.startsWith("accuracy 0.89 below the minimum"))
        .anyMatch(r -> r.equals("latency 40.0 ms predicted from host lab-cpu (20.0 ms there x baseline 100.0 / 50.0)"
            + " exceeds the objective of 30.0 ms"));
  }

  @Test
  void shouldNotDependOnTheOrderOfHostsCandidatesOrTimings() {
    VersionPlan plan = VersionSelector.choose(problem(LAB_TIMINGS, VersionRequirements.NONE));
    java.util.Random random = new java.util.Random(5);
    for (int round = 0; round < 20; round++) {
      List<HostFacts> hosts = new ArrayList<>(List.of(LAB_GPU, LAB_SIMILAR));
      List<ModelVersion> candidates = new ArrayList<>(List.of(FP32, INT8, FP16_CUDA, HUGE));
      List<TimingObservation> timings = new ArrayList<>(LAB_TIMINGS);
      java.util.Collections.shuffle(hosts, random);
      java.util.Collections.shuffle(candidates, random);
      java.util.Collections.shuffle(timings, random);

      assertThat(VersionSelector.choose(new VersionProblem(NEW_HOST, hosts, candidates, timings,
          VersionRequirements.NONE))).isEqualTo(plan);
    }
  }

  @Test
  void shouldBreakTiesByAccuracyThenVersionId() {
    ModelVersion a = new ModelVersion("b-version", Set.of("CPU"), "fp32", GIB, 0.8);
    ModelVersion b = new ModelVersion("a-version", Set.of("CPU"), "fp32", GIB, 0.8);
    ModelVersion c = new ModelVersion("c-version", Set.of("CPU"), "fp32", GIB, 0.9);
    List<TimingObservation> t = List.of(new TimingObservation("a-version", "edge-1", 10),
        new TimingObservation("b-version", "edge-1", 10), new TimingObservation("c-version", "edge-1", 10));

    VersionPlan plan = VersionSelector.choose(new VersionProblem(NEW_HOST, List.of(), List.of(a, b, c), t,
        VersionRequirements.NONE));

    assertThat(plan.outcomes()).extracting(VersionOutcome::versionId)
        .containsExactly("c-version", "a-version", "b-version");
  }

  @Test
  void shouldRankSimilarHostsBySameProvidersThenFlagsThenBaseline() {
    HostFacts sameProvidersFarScore = new HostFacts("far", Set.of("CPU"), Set.of("avx2"), GIB, 500);
    HostFacts sameProvidersNearScore = new HostFacts("near", Set.of("CPU"), Set.of("avx2"), GIB, 60);
    HostFacts otherProviders = new HostFacts("gpu", Set.of("CPU", "CUDA"), Set.of("avx2", "fma"), GIB, 50);

    assertThat(VersionSelector.compareSimilarity(NEW_HOST, sameProvidersNearScore, sameProvidersFarScore)).isNegative();
    assertThat(VersionSelector.compareSimilarity(NEW_HOST, sameProvidersFarScore, otherProviders)).isNegative();
    assertThat(VersionSelector.compareSimilarity(NEW_HOST, LAB_SIMILAR, sameProvidersNearScore)).isNegative();
  }
}

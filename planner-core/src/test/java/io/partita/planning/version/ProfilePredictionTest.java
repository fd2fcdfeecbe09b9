package io.partita.planning.version;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The profile of a host with no timings of its own, predicted from the most similar measured host. */
class ProfilePredictionTest {
  private static final long GIB = 1L << 30;
  private static final HostFacts NEW = new HostFacts("new", Set.of("CPU"), Set.of("avx2", "fma"), 8 * GIB, 50);
  private static final HostFacts TWIN = new HostFacts("twin", Set.of("CPU"), Set.of("avx2", "fma"), 8 * GIB, 100);
  private static final HostFacts OTHER_FLAGS = new HostFacts("flags", Set.of("CPU"), Set.of("sse4"), 8 * GIB, 50);
  private static final HostFacts GPU_HOST = new HostFacts("gpu", Set.of("CPU", "CUDA"), Set.of("avx2", "fma"), 8 * GIB, 50);

  private static ProfilePrediction.Source source(HostFacts host, String provider, double... latencies) {
    List<ProfilePoint> points = new ArrayList<>();
    for (int i = 0; i < latencies.length; i++) {
      points.add(new ProfilePoint(i + 1, latencies[i], 1L << 20));
    }
    return new ProfilePrediction.Source(host, provider, 1, points);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        // sources, expected source host (null = no prediction), expected size-1 time
        Arguments.of("no measured host", List.of(), null, 0.0),
        Arguments.of("only the host itself", List.of(source(NEW, "CPU", 4.0)), null, 0.0),
        Arguments.of("one source, twice as fast: times double", List.of(source(TWIN, "CPU", 4.0, 2.5)), "twin", 8.0),
        Arguments.of("same flags beat the same baseline",
            List.of(source(OTHER_FLAGS, "CPU", 10.0), source(TWIN, "CPU", 4.0)), "twin", 8.0),
        Arguments.of("same providers beat everything else",
            List.of(source(GPU_HOST, "CPU", 3.0), source(OTHER_FLAGS, "CPU", 10.0)), "flags", 10.0),
        Arguments.of("a provider the host does not load is never a source",
            List.of(source(GPU_HOST, "CUDA", 1.0)), null, 0.0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void shouldPredictFromTheMostSimilarUsableHostScaledByBaseline(String name, List<ProfilePrediction.Source> sources,
      String expectedSource, double expectedSize1Ms) {
    Optional<ProfilePrediction.Predicted> p = ProfilePrediction.predict(NEW, sources);

    if (expectedSource == null) {
      assertThat(p).isEmpty();
      return;
    }
    assertThat(p).isPresent();
    assertThat(p.get().source().hostId()).isEqualTo(expectedSource);
    assertThat(p.get().points().get(0).latencyMs()).isEqualTo(expectedSize1Ms);
    assertThat(p.get().points()).allSatisfy(pt -> assertThat(pt.memoryBytes()).isEqualTo(1L << 20));
  }

  @Test
  void shouldUseTheSameSourceAsVersionChoice() {
    // Version choice and the partition profile must agree on where a prediction comes from.
    List<HostFacts> hosts = List.of(TWIN, OTHER_FLAGS, GPU_HOST,
        new HostFacts("near", Set.of("CPU"), Set.of("avx2", "fma"), 8 * GIB, 60));
    List<ProfilePrediction.Source> sources = new ArrayList<>();
    List<TimingObservation> timings = new ArrayList<>();
    for (HostFacts h : hosts) {
      sources.add(source(h, "CPU", 5.0));
      timings.add(new TimingObservation("v", h.hostId(), 5.0));
    }
    VersionPlan version = VersionSelector.choose(new VersionProblem(NEW, hosts,
        List.of(new ModelVersion("v", Set.of("CPU"), "fp32", 0, null)), timings, VersionRequirements.NONE));

    ProfilePrediction.Predicted predicted = ProfilePrediction.predict(NEW, sources).orElseThrow();

    assertThat(predicted.source().hostId()).isEqualTo(version.outcomes().get(0).sourceHost()).isEqualTo("near");
    assertThat(predicted.points().get(0).latencyMs()).isEqualTo(version.outcomes().get(0).latencyMs());
    assertThat(predicted.timeScale()).isEqualTo(60.0 / 50.0);
    assertThat(predicted.describe(NEW)).isEqualTo("host near's timings x baseline 60.0 / 50.0");
  }

  @Test
  void shouldNotDependOnTheOrderOfTheSources() {
    List<ProfilePrediction.Source> sources = new ArrayList<>(List.of(source(TWIN, "CPU", 4.0, 2.0),
        source(OTHER_FLAGS, "CPU", 1.0), source(GPU_HOST, "CPU", 3.0),
        source(new HostFacts("twin2", Set.of("CPU"), Set.of("avx2", "fma"), GIB, 100), "CPU", 9.0)));
    ProfilePrediction.Predicted first = ProfilePrediction.predict(NEW, sources).orElseThrow();
    Random random = new Random(7);
    for (int i = 0; i < 20; i++) {
      Collections.shuffle(sources, random);
      assertThat(ProfilePrediction.predict(NEW, sources)).contains(first);
    }
    assertThat(first.source().hostId()).as("ties on everything but the id go to the smaller id").isEqualTo("twin");
  }

  @Test
  void shouldRefuseTwoSourcesOfOneHost() {
    assertThatThrownBy(() -> ProfilePrediction.predict(NEW, List.of(source(TWIN, "CPU", 1.0), source(TWIN, "CPU", 2.0))))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("sources: host twin given twice");
  }
}

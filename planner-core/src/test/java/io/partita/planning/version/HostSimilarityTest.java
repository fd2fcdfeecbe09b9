package io.partita.planning.version;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The similarity order as a sorted list ({@link HostSimilarity#ordered}): walking it to the first
 * usable host finds what {@link HostSimilarity#mostSimilar} finds among the usable hosts, on random
 * small worlds built to tie (few providers, flags and baseline scores, so hosts tie on everything
 * but their id).
 */
class HostSimilarityTest {
  private static final List<Set<String>> PROVIDERS = List.of(Set.of("CPU"), Set.of("CPU", "CUDA"));
  private static final List<String> FLAGS = List.of("avx2", "fma", "avx512f", "sse4");
  private static final double[] SCORES = {25, 50, 100, 200, 400};

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  void shouldFindTheMostSimilarUsableHostAsTheFirstUsableOneInOrder(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    for (int world = 0; world < 200; world++) {
      List<HostFacts> hosts = new ArrayList<>();
      int n = 1 + random.nextInt(12);
      for (int i = 0; i < n; i++) {
        hosts.add(host(random, "h" + random.nextInt(1000) + "-" + i));
      }
      HostFacts target = random.nextInt(4) == 0 ? hosts.get(random.nextInt(n)) : host(random, "target");
      List<HostFacts> usable = new ArrayList<>();
      hosts.forEach(h -> {
        if (random.nextInt(3) > 0) {
          usable.add(h);
        }
      });

      List<HostFacts> ordered = HostSimilarity.ordered(target, hosts);
      Optional<HostFacts> walked = ordered.stream().filter(usable::contains).findFirst();

      assertThat(walked).as("world %d: target %s, hosts %s, usable %s", world, target, hosts, usable)
          .isEqualTo(HostSimilarity.mostSimilar(target, usable));
      assertThat(ordered).doesNotContain(target)
          .containsExactlyInAnyOrderElementsOf(hosts.stream().filter(h -> !h.hostId().equals(target.hostId())).toList());
      for (int i = 1; i < ordered.size(); i++) {
        assertThat(HostSimilarity.compare(target, ordered.get(i - 1), ordered.get(i))).isNegative();
      }
    }
  }

  private static HostFacts host(SplittableRandom random, String id) {
    Set<String> flags = new HashSet<>();
    for (String f : FLAGS) {
      if (random.nextBoolean()) {
        flags.add(f);
      }
    }
    return new HostFacts(id, PROVIDERS.get(random.nextInt(PROVIDERS.size())), flags, 1L << 30,
        SCORES[random.nextInt(SCORES.length)]);
  }
}

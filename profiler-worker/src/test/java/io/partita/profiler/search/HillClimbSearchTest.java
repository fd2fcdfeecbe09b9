package io.partita.profiler.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.ToDoubleFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

class HillClimbSearchTest {

  /**
   * A synthetic cost surface shaped like a CPU inference workload: per-batch latency is a fixed
   * overhead that grows with threads (synchronisation) plus per-item work that threads speed up
   * sublinearly up to the core count and slow down past it (oversubscription), and that gets more
   * expensive per item past a cache-sized batch.
   */
  record Surface(String name, int cores, double overheadMs, double syncMsPerThread, double itemMs,
                 double scaling, double oversubscriptionPenalty, int cacheBatch, double cachePenalty, double noise) {

    double throughput(GridPoint p) {
      int t = p.threads();
      double speed = t <= cores ? Math.pow(t, scaling)
          : Math.pow(cores, scaling) * Math.pow((double) cores / t, oversubscriptionPenalty);
      double over = Math.max(0, (double) (p.batch() - cacheBatch) / cacheBatch);
      double perItem = itemMs * (1 + cachePenalty * over * over);
      double latencyMs = overheadMs + syncMsPerThread * t + p.batch() * perItem / speed;
      double value = p.batch() * 1000.0 / latencyMs;
      if (noise > 0) {
        // deterministic per point, so the surface is the same every run
        SplittableRandom r = new SplittableRandom(31L * t + 7919L * p.batch());
        value *= 1 + noise * (2 * r.nextDouble() - 1);
      }
      return value;
    }

    List<Integer> threads() {
      return IntStream.rangeClosed(1, 2 * cores).boxed().toList();
    }
  }

  static List<Surface> surfaces() {
    return List.of(
        new Surface("2 cores, small model", 2, 0.05, 0.01, 0.02, 0.9, 1.0, 64, 0.3, 0),
        new Surface("2 cores, heavy model", 2, 0.2, 0.05, 1.5, 0.95, 1.5, 16, 0.5, 0),
        new Surface("4 cores, overhead-bound", 4, 1.0, 0.02, 0.01, 0.7, 0.8, 128, 0.2, 0),
        new Surface("8 cores, poor scaling", 8, 0.1, 0.08, 0.2, 0.5, 1.2, 32, 1.0, 0),
        new Surface("8 cores, 2% noise", 8, 0.1, 0.02, 0.1, 0.85, 1.0, 48, 0.4, 0.02),
        new Surface("16 cores, large batches win", 16, 2.0, 0.01, 0.05, 0.9, 1.0, 256, 0.1, 0),
        new Surface("4 cores, cache cliff at 8", 4, 0.05, 0.01, 0.3, 0.8, 1.0, 8, 2.0, 0.01),
        new Surface("8 cores, sync-heavy", 8, 0.05, 0.5, 0.1, 0.6, 1.0, 64, 0.3, 0),
        new Surface("2 cores, tiny model, 1 thread", 2, 0.02, 0.2, 0.001, 0.3, 2.0, 512, 0.1, 0.02));
  }

  record Run(int measured, int grid, Measured best, double gridBest, double atDefault) {}

  static Run run(Surface s, List<Integer> batches) {
    List<Integer> threads = s.threads();
    GridPoint start = new GridPoint(s.cores(), 1);
    HillClimbSearch search = new HillClimbSearch(threads, batches, start, 0.0);
    Optional<GridPoint> next;
    while ((next = search.next()).isPresent()) {
      search.record(next.get(), s.throughput(next.get()));
    }
    double gridBest = 0;
    for (int t : threads) {
      for (int b : batches) {
        gridBest = Math.max(gridBest, s.throughput(new GridPoint(t, b)));
      }
    }
    return new Run(search.measuredCount(), search.gridSize(), search.best().orElseThrow(), gridBest, s.throughput(start));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("surfaces")
  void shouldMeasureAtMostAQuarterOfTheGridAndReach95PercentOfItsBest(Surface s) {
    Run r = run(s, HillClimbSearch.halfOctaves(256));
    System.out.printf("%-30s measured %3d of %3d, best %s = %.1f, grid best %.1f (%.1f%%)%n", s.name(),
        r.measured(), r.grid(), r.best().point(), r.best().throughput(), r.gridBest(),
        100 * r.best().throughput() / r.gridBest());
    assertThat(r.measured()).isLessThanOrEqualTo(r.grid() / 4);
    assertThat(r.best().throughput()).isGreaterThanOrEqualTo(0.95 * r.gridBest());
    assertThat(r.best().throughput()).isGreaterThanOrEqualTo(r.atDefault());
  }

  @Test
  void shouldReachTheExactOptimumOfASingleSmoothPeak() {
    List<Integer> threads = List.of(1, 2, 3, 4, 5, 6, 7, 8);
    List<Integer> batches = List.of(1, 2, 4, 8, 16, 32, 64, 128, 256, 512);
    ToDoubleFunction<GridPoint> f = p -> {
      double dt = p.threads() - 5;
      double db = Math.log(p.batch()) / Math.log(2) - 6;
      return 1000 - dt * dt - db * db;
    };
    HillClimbSearch search = new HillClimbSearch(threads, batches, new GridPoint(1, 1), 0);
    Optional<GridPoint> next;
    while ((next = search.next()).isPresent()) {
      search.record(next.get(), f.applyAsDouble(next.get()));
    }
    assertThat(search.best().orElseThrow().point()).isEqualTo(new GridPoint(5, 64));
    assertThat(search.measuredCount()).isLessThanOrEqualTo(20);
    assertThat(search.isDone()).isTrue();
  }

  @Test
  void shouldNeverProposeAPointTwice() {
    Surface s = surfaces().get(4);
    HillClimbSearch search = new HillClimbSearch(s.threads(), HillClimbSearch.halfOctaves(256), new GridPoint(8, 1), 0);
    List<GridPoint> proposed = new ArrayList<>();
    Optional<GridPoint> next;
    while ((next = search.next()).isPresent()) {
      proposed.add(next.get());
      search.record(next.get(), s.throughput(next.get()));
    }
    assertThat(proposed).doesNotHaveDuplicates();
    assertThat(search.history()).extracting(Measured::point).containsExactlyElementsOf(proposed);
  }

  @Test
  void shouldTreatFailedPointsAsWorseAndKeepClimbing() {
    // batches above 16 fail (say, out of memory): the search stays below and still finds the best there
    List<Integer> threads = List.of(1, 2);
    List<Integer> batches = HillClimbSearch.halfOctaves(256);
    HillClimbSearch search = new HillClimbSearch(threads, batches, new GridPoint(2, 1), 0);
    Optional<GridPoint> next;
    while ((next = search.next()).isPresent()) {
      GridPoint p = next.get();
      search.record(p, p.batch() > 16 ? Double.NaN : p.batch() * p.threads());
    }
    assertThat(search.best().orElseThrow().point()).isEqualTo(new GridPoint(2, 16));
    assertThat(search.history()).anyMatch(Measured::failed);
  }

  @Test
  void shouldRepeatTheProposalUntilItIsRecordedAndRefuseAnotherPoint() {
    HillClimbSearch search = new HillClimbSearch(List.of(1, 2), List.of(1, 2), new GridPoint(1, 1), 0);
    assertThat(search.next()).contains(new GridPoint(1, 1));
    assertThat(search.next()).contains(new GridPoint(1, 1));
    assertThatThrownBy(() -> search.record(new GridPoint(2, 2), 1.0)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void shouldRefuseAStartOffTheGridAndUnsortedAxes() {
    assertThatThrownBy(() -> new HillClimbSearch(List.of(1, 2), List.of(1, 2), new GridPoint(3, 1), 0))
        .hasMessageContaining("not on the grid");
    assertThatThrownBy(() -> new HillClimbSearch(List.of(2, 1), List.of(1, 2), new GridPoint(1, 1), 0))
        .hasMessageContaining("threadValues must be strictly increasing");
  }

  @Test
  void shouldBuildTheHalfOctaveBatchAxis() {
    assertThat(HillClimbSearch.halfOctaves(64)).containsExactly(1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64);
    assertThat(HillClimbSearch.halfOctaves(5)).containsExactly(1, 2, 3, 4);
  }
}

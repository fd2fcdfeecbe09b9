package io.partita.profiler.measure;

import io.partita.profiler.env.BaselineScore;
import io.partita.profiler.onnx.TinyModels;
import io.partita.profiler.search.GridPoint;
import io.partita.profiler.search.HillClimbSearch;
import io.partita.profiler.search.Measured;
import io.partita.profiler.stats.LatencySummary;
import io.partita.profiler.stats.Sampler;
import io.partita.runtime.SlotConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The host's baseline benchmark: {@link HillClimbSearch} over (intra-op threads, batch size) on the
 * fixed reference model ({@link TinyModels#referenceMlp()}), measured with {@link Measurer}'s
 * sampler. The score is the best throughput found, from 10th-percentile latencies, held to what a
 * CPU quota lets the host sustain (see {@link #score}).
 *
 * <p>Grid: threads 1 to twice the usable cores (a thread count up to the cores is pinned one thread
 * per core with spinning; above it, threads are unpinned and do not spin, which is what
 * oversubscription looks like in practice), batch sizes 1 to 1024 on a half-octave scale. The search
 * starts at the default configuration (all usable cores, batch 1). With {@code compareGrid} every
 * grid point is measured too, to report how close the search came; that is for the benchmark command
 * and docs, not for routine runs.
 */
public final class BaselineBenchmark {

  /** The reference model's name in scores, so only like-for-like scores are compared. */
  public static final String REFERENCE_MODEL = "reference-mlp-" + TinyModels.REFERENCE_LAYERS + "x"
      + TinyModels.REFERENCE_WIDTH;

  /** The batch axis's end: past the reference model's best batch on the hosts tried so far. */
  static final int MAX_BATCH = 1024;

  /** The latency percentile the score is computed from (see {@link #throughput}). */
  static final double SCORE_PERCENTILE = 10;

  /** Relative gain a move needs, so the climb does not chase measurement noise. */
  static final double MIN_GAIN = 0.005;

  /**
   * @param searched the points the search measured, in order
   * @param grid every grid point, when the full grid was measured for comparison
   */
  public record Report(BaselineScore score, List<Measured> searched, Optional<List<Measured>> grid) {

    /** The grid's best point, when the grid was measured. */
    public Optional<Measured> gridBest() {
      return grid.flatMap(all -> all.stream().filter(m -> !m.failed())
          .max(Comparator.comparingDouble(Measured::throughput)));
    }
  }

  private final Measurer measurer;

  public BaselineBenchmark(Measurer measurer) {
    this.measurer = measurer;
  }

  public static List<Integer> threadAxis(int usableCores) {
    List<Integer> threads = new ArrayList<>();
    for (int t = 1; t <= 2 * usableCores; t++) {
      threads.add(t);
    }
    return threads;
  }

  public static List<Integer> batchAxis() {
    return HillClimbSearch.halfOctaves(MAX_BATCH);
  }

  public Report run(boolean compareGrid, ProgressListener progress) {
    int usable = measurer.host().usableCores();
    List<Integer> threads = threadAxis(usable);
    List<Integer> batches = batchAxis();
    HillClimbSearch search = new HillClimbSearch(threads, batches, new GridPoint(usable, 1), MIN_GAIN);
    ModelRef reference = ModelRef.ofBytes(REFERENCE_MODEL, "1", TinyModels.referenceMlp());
    int index = 0;
    Optional<GridPoint> next;
    while ((next = search.next()).isPresent()) {
      String label = "search threads=" + next.get().threads() + " batch=" + next.get().batch();
      progress.starting(index, -1, label);
      double throughput = throughput(reference, next.get(), usable);
      search.record(next.get(), throughput);
      progress.finished(index++, -1, label, !Double.isNaN(throughput));
    }
    Measured best = search.best().orElseThrow(
        () -> new IllegalStateException("the reference model failed at every point the search tried"));
    BaselineScore score = new BaselineScore(best.throughput(), best.point().threads(), best.point().batch(),
        search.measuredCount(), search.gridSize(), REFERENCE_MODEL);
    Optional<List<Measured>> grid = Optional.empty();
    if (compareGrid) {
      List<Measured> all = new ArrayList<>();
      int total = search.gridSize();
      for (int t : threads) {
        for (int b : batches) {
          GridPoint p = new GridPoint(t, b);
          String label = "grid threads=" + t + " batch=" + b;
          progress.starting(all.size(), total, label);
          double throughput = throughput(reference, p, usable);
          all.add(new Measured(p, throughput));
          progress.finished(all.size() - 1, total, label, !Double.isNaN(throughput));
        }
      }
      grid = Optional.of(List.copyOf(all));
    }
    return new Report(score, search.history(), grid);
  }

  /**
   * Items per second at one grid point from the 10th-percentile latency (batch / p10), NaN when the
   * point failed. Interference from other processes only ever adds time, and on a busy host it
   * reaches most runs of a point, so the mean or even the median says more about the neighbours
   * than about the host; the fast tail is what the hardware can do. The mean-based throughput of
   * {@link TimingResult} is what a planner sums; this score is only for comparing hosts and for
   * steering the search.
   */
  private double throughput(ModelRef reference, GridPoint p, int usable) {
    SlotConfig slot = p.threads() <= usable
        ? measurer.cpuSlot(measurer.host().usableCpuIds().subList(0, p.threads()))
        : SlotConfig.unpinned(p.threads());
    Measurer.SlotsOutcome run = measurer.runSlots(reference, List.of(slot), p.batch(), measurer.samplerSettings());
    if (run.error() != null) {
      return Double.NaN;
    }
    Sampler.Outcome outcome = run.slots().get(0).outcome();
    long[] sorted = outcome.samplesNanos().clone();
    Arrays.sort(sorted);
    return score(p.batch() * 1e9 / LatencySummary.percentile(sorted, SCORE_PERCENTILE), outcome.throughput(p.batch()),
        measurer.host().cpuQuotaCores(), p.threads());
  }

  /**
   * A grid point's score: its fast-tail throughput ({@code batch / p10}), unless a CPU quota (a
   * cgroup's CFS quota) holds the host below the cores the point's threads use. Under a quota a
   * short run fits the slice each period grants and is timed at full speed, the throttled rest of
   * the period falling between runs: a host given a fifth of a core would score as a whole core. So
   * the fast-tail figure is scaled by {@code quota / threads}; when runs were long enough to be
   * throttled themselves, their p10 already carries the pauses, and the sustained throughput (items
   * over the run's wall time) is the larger and the right figure. Without a quota, as before.
   */
  static double score(double fastTail, double sustained, Double quotaCores, int threads) {
    if (quotaCores == null || !(quotaCores > 0) || quotaCores >= threads) {
      return fastTail;
    }
    return Math.max(fastTail * quotaCores / threads, Math.min(fastTail, sustained));
  }
}

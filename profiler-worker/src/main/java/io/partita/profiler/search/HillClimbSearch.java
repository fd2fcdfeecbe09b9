package io.partita.profiler.search;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Hill climbing over a grid of (threads, batch) that proposes points and is fed their measured
 * throughput; it never measures anything itself, so the same loop runs against ONNX Runtime and
 * against a synthetic cost surface in tests.
 *
 * <p>Method: accelerated coordinate ascent. From the start point it walks one axis at a time (batch
 * first, then threads), in each direction: a step that improves the best throughput by more than
 * {@code minGain} is taken and the next step along that axis is twice as long; a step that does
 * not improve halves the step; the direction is finished when a single-index step fails. When a
 * pass over both axes moves nowhere, the search ends at a local maximum. Points already measured
 * are looked up, never measured twice, and points off the grid are treated as failures. The doubling
 * crosses long flat or rising stretches (batch sizes) in logarithmically many measurements, which
 * is what keeps the count under a quarter of the grid.
 *
 * <p>It guarantees termination (every move strictly improves, the grid is finite) and that the
 * reported best is the best of the points it measured. It does not guarantee the global optimum: a
 * surface with several separated peaks can trap it, which is why the grid's axes are chosen so that
 * throughput is roughly unimodal along each (see docs/internals/profiler.md).
 *
 * <p>Use: {@code while ((p = search.next()).isPresent()) search.record(p.get(), measure(p.get()));}.
 * Not thread-safe.
 */
public final class HillClimbSearch {

  private static final int BATCH_AXIS = 0;
  private static final int THREADS_AXIS = 1;

  private final List<Integer> threadValues;
  private final List<Integer> batchValues;
  private final double minGain;
  private final Map<GridPoint, Double> measured = new LinkedHashMap<>();

  private int[] current;
  private double currentValue = Double.NaN;
  private boolean started;
  private boolean done;
  private int axis = BATCH_AXIS;
  private int direction = +1;
  private int step = 1;
  private boolean accelerating = true;
  private boolean movedThisPass;
  private GridPoint awaiting;
  private int[] awaitingIndex;

  /**
   * @param threadValues the threads axis, strictly increasing
   * @param batchValues the batch axis, strictly increasing
   * @param start where to begin (must be on the grid); the default configuration, so the result is
   *     never worse than the default
   * @param minGain relative improvement a move needs, e.g. 0.01 so measurement noise does not
   *     drive the climb; 0 for exact surfaces
   */
  public HillClimbSearch(List<Integer> threadValues, List<Integer> batchValues, GridPoint start, double minGain) {
    this.threadValues = checkAxis("threadValues", threadValues);
    this.batchValues = checkAxis("batchValues", batchValues);
    if (!(minGain >= 0 && minGain < 1)) {
      throw new IllegalArgumentException("minGain must be in [0, 1), got " + minGain);
    }
    this.minGain = minGain;
    int t = threadValues.indexOf(start.threads());
    int b = batchValues.indexOf(start.batch());
    if (t < 0 || b < 0) {
      throw new IllegalArgumentException("start " + start + " is not on the grid " + threadValues + " x " + batchValues);
    }
    this.current = new int[] {b, t};
  }

  private static List<Integer> checkAxis(String name, List<Integer> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException(name + " must not be empty");
    }
    for (int i = 1; i < values.size(); i++) {
      if (values.get(i) <= values.get(i - 1)) {
        throw new IllegalArgumentException(name + " must be strictly increasing, got " + values);
      }
    }
    return List.copyOf(values);
  }

  /** The next point to measure, or empty when the search has ended. Repeats until it is recorded. */
  public Optional<GridPoint> next() {
    if (done) {
      return Optional.empty();
    }
    if (awaiting != null) {
      return Optional.of(awaiting);
    }
    if (!started) {
      awaitingIndex = current.clone();
      awaiting = pointAt(awaitingIndex);
      return Optional.of(awaiting);
    }
    // Resolve candidates that need no measurement (off the grid, or already measured) here.
    while (!done) {
      int[] candidate = current.clone();
      candidate[axis] += direction * step;
      if (!onGrid(candidate)) {
        onCandidateResult(candidate, Double.NaN);
        continue;
      }
      GridPoint p = pointAt(candidate);
      Double known = measured.get(p);
      if (known != null) {
        onCandidateResult(candidate, known);
        continue;
      }
      awaiting = p;
      awaitingIndex = candidate;
      return Optional.of(p);
    }
    return Optional.empty();
  }

  /**
   * Feeds the measured throughput of the point last proposed by {@link #next()}; {@code NaN} for a
   * failed measurement.
   */
  public void record(GridPoint point, double throughput) {
    if (awaiting == null || !awaiting.equals(point)) {
      throw new IllegalStateException("expected a result for " + awaiting + ", got " + point);
    }
    measured.put(point, throughput);
    int[] index = awaitingIndex;
    awaiting = null;
    awaitingIndex = null;
    if (!started) {
      started = true;
      currentValue = throughput;
      return;
    }
    onCandidateResult(index, throughput);
  }

  private void onCandidateResult(int[] candidate, double value) {
    if (better(value, currentValue)) {
      current = candidate;
      currentValue = value;
      movedThisPass = true;
      if (accelerating) {
        step *= 2;
      }
      return;
    }
    accelerating = false;
    if (step > 1) {
      step /= 2;
      return;
    }
    finishDirection();
  }

  private boolean better(double value, double than) {
    if (Double.isNaN(value)) {
      return false;
    }
    if (Double.isNaN(than)) {
      return true;
    }
    return value > than * (1 + minGain);
  }

  private void finishDirection() {
    step = 1;
    accelerating = true;
    if (direction > 0) {
      direction = -1;
      return;
    }
    direction = +1;
    if (axis == BATCH_AXIS) {
      axis = THREADS_AXIS;
      return;
    }
    axis = BATCH_AXIS;
    if (movedThisPass) {
      movedThisPass = false;
    } else {
      done = true;
    }
  }

  private boolean onGrid(int[] index) {
    return index[BATCH_AXIS] >= 0 && index[BATCH_AXIS] < batchValues.size()
        && index[THREADS_AXIS] >= 0 && index[THREADS_AXIS] < threadValues.size();
  }

  private GridPoint pointAt(int[] index) {
    return new GridPoint(threadValues.get(index[THREADS_AXIS]), batchValues.get(index[BATCH_AXIS]));
  }

  public boolean isDone() {
    return done;
  }

  /** How many distinct points were measured so far. */
  public int measuredCount() {
    return measured.size();
  }

  public int gridSize() {
    return threadValues.size() * batchValues.size();
  }

  /** The best measured point, empty if none succeeded. */
  public Optional<Measured> best() {
    Measured best = null;
    for (Map.Entry<GridPoint, Double> e : measured.entrySet()) {
      if (!Double.isNaN(e.getValue()) && (best == null || e.getValue() > best.throughput())) {
        best = new Measured(e.getKey(), e.getValue());
      }
    }
    return Optional.ofNullable(best);
  }

  /** Every measurement, in the order taken. */
  public List<Measured> history() {
    List<Measured> out = new ArrayList<>();
    measured.forEach((p, v) -> out.add(new Measured(p, v)));
    return Collections.unmodifiableList(out);
  }

  /**
   * The batch axis used by the baseline benchmark: 1 to {@code max} on a half-octave scale
   * (1, 2, 3, 4, 6, 8, 12, 16, 24, ...), fine enough that the best batch is within ~20% of a grid
   * point.
   */
  public static List<Integer> halfOctaves(int max) {
    List<Integer> out = new ArrayList<>();
    for (int p = 1; p <= max; p *= 2) {
      out.add(p);
      int mid = p + p / 2;
      if (p >= 2 && mid <= max) {
        out.add(mid);
      }
    }
    Collections.sort(out);
    return List.copyOf(out);
  }
}

package io.partita.planning.grouping;

import io.partita.planning.ProfilePoint;
import io.partita.planning.Tolerance;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Cuts one pool of {@code N} alike resources into partitions for one model (docs/concepts.md, method 1).
 *
 * <p><b>Formula.</b> For a grouping {@code G = {k_1..k_p}} of measured sizes, the throughput is
 * {@code X(G) = sum_i b * 1000 / T(k_i)} inferences per second ({@code T} in ms, {@code b} the batch
 * size) and the latency is {@code L(G) = max_i T(k_i)}. {@code G} is eligible when
 * {@code sum_i k_i <= N}, every {@code k_i} was measured, {@code sum_i M(k_i) <= poolMemory},
 * {@code p * buffer <= threshold}, and {@code T(k_i) <= SLO} for every partition when an SLO is
 * given.
 *
 * <p><b>Order.</b> Throughput objective: highest {@code X}; ties (relative tolerance 1e-9, so that
 * sums taken in another order still tie) go to fewer partitions, then to the lexicographically
 * larger size list sorted descending. Latency objective: lowest {@code L} first, then the
 * throughput order. {@link #compare} is that order; the plan's choice is its minimum over all
 * eligible groupings.
 *
 * <p><b>Method.</b> Exact, never a heuristic:
 * <ul>
 *   <li>The latency objective is reduced to the throughput one: {@code L* = min T(k)} over the sizes
 *       that are eligible alone, then the throughput problem over sizes with {@code T(k) <= L*}.
 *   <li>When memory cannot bind (an upper bound on {@code sum M(k_i)} over all groupings fits the
 *       pool), an unbounded-knapsack dynamic program over resources used keeps, for each {@code r},
 *       the best pair (throughput, fewest partitions); {@code O(N * K)} for {@code K} sizes. If its
 *       optimum needs more partitions than the buffer allows, a second program over (partitions
 *       used, resources used) finds the best with {@code p <= P}; {@code O(P * N * K)}.
 *   <li>When memory can bind, the program over (partitions, resources) keeps at each state the
 *       Pareto front of (throughput, memory), pruning a candidate only when another one at the same
 *       state needs no more memory and is faster, or as fast and wins the size-list tie-break; every
 *       extension of the pruned one is then matched by an extension of the survivor.
 *   <li>The size list is rebuilt greedily from the optimal states: the first size is the largest
 *       size used by any optimal grouping, then recursively. That yields the lexicographically
 *       largest optimal list.
 * </ul>
 *
 * <p><b>Guarantees.</b> Deterministic; the result depends on the profile as a set, not on its order;
 * never throws for an unplannable pool: "no eligible grouping" is a result with its reason. It does
 * not split a pool between models: {@link PoolSplitter} does that.
 */
public final class GroupingPlanner {

  /** Relative tolerance under which two throughputs count as equal. */
  public static final double REL_TOLERANCE = Tolerance.RELATIVE;

  private static final int RUNNERS_UP = 3;

  private GroupingPlanner() {}

  /** Plans {@code problem}; see the class comment for the formula and the order. */
  public static GroupingPlan plan(GroupingProblem problem) {
    int maxP = problem.maxPartitionsByBuffer();
    if (problem.poolSize() > GroupingProblem.MAX_POOL_SIZE) {
      // The programs' tables grow with N (and N * P); past the bound they would not fit in memory.
      return noPlan(problem, List.of(), maxP, "a pool of " + problem.poolSize()
          + " resources exceeds the planner's bound of " + GroupingProblem.MAX_POOL_SIZE
          + " (the exact programs are O(N * K) to O(P * N * K)); split it into smaller pools");
    }
    List<SizeExclusion> excluded = new ArrayList<>();
    List<ProfilePoint> items = new ArrayList<>();
    for (ProfilePoint point : problem.profile()) {
      String reason = exclusionReason(problem, point);
      if (reason == null) {
        items.add(point);
      } else {
        excluded.add(new SizeExclusion(point.size(), reason));
      }
    }
    if (maxP < 1) {
      return noPlan(problem, excluded, maxP, "buffer threshold " + problem.bufferThresholdBytes()
          + " B allows no partition needing " + problem.bufferBytesPerPartition() + " B");
    }
    if (items.isEmpty()) {
      StringBuilder why = new StringBuilder("no measured size is eligible:");
      for (SizeExclusion e : excluded) {
        why.append(" size ").append(e.size()).append(": ").append(e.reason()).append(';');
      }
      why.setLength(why.length() - 1);
      return noPlan(problem, excluded, maxP, why.toString());
    }

    List<ProfilePoint> usable = items;
    if (problem.objective() == GroupingObjective.LATENCY) {
      double best = items.stream().mapToDouble(ProfilePoint::latencyMs).min().orElseThrow();
      usable = items.stream().filter(p -> p.latencyMs() <= best).toList();
    }
    Solution solution = solveThroughput(problem, usable, maxP);
    Grouping choice = toGrouping(problem, solution.sizes());
    List<Grouping> runnersUp = runnersUp(problem, items, maxP, choice);
    return new GroupingPlan(problem.modelId(), problem.objective(), choice, runnersUp, excluded, maxP,
        null, solution.method());
  }

  /**
   * The plan order: negative when {@code a} is the better grouping under {@code objective}.
   * Throughputs within {@link #REL_TOLERANCE} of each other tie.
   */
  public static int compare(Grouping a, Grouping b, GroupingObjective objective) {
    if (objective == GroupingObjective.LATENCY) {
      int c = Double.compare(a.maxLatencyMs(), b.maxLatencyMs());
      if (c != 0) {
        return c;
      }
    }
    int c = compareValue(b.throughputPerSecond(), a.throughputPerSecond());
    if (c != 0) {
      return c;
    }
    c = Integer.compare(a.partitions(), b.partitions());
    if (c != 0) {
      return c;
    }
    return -compareSizeLists(a.sizes(), b.sizes());
  }

  /** Builds the grouping record of {@code sizes} (any order) from the problem's profile. */
  public static Grouping toGrouping(GroupingProblem problem, List<Integer> sizes) {
    Map<Integer, ProfilePoint> bySize = new HashMap<>();
    for (ProfilePoint p : problem.profile()) {
      bySize.put(p.size(), p);
    }
    List<Integer> sorted = new ArrayList<>(sizes);
    sorted.sort(Comparator.reverseOrder());
    double throughput = 0;
    double maxLatency = 0;
    long memory = 0;
    int used = 0;
    for (int k : sorted) {
      ProfilePoint p = bySize.get(k);
      if (p == null) {
        throw new IllegalArgumentException("size " + k + " was not measured");
      }
      throughput += problem.batchSize() * 1000.0 / p.latencyMs();
      maxLatency = Math.max(maxLatency, p.latencyMs());
      memory = Math.addExact(memory, p.memoryBytes()); // never wraps into a small, "fitting" sum
      used += k;
    }
    return new Grouping(sorted, sorted.size(), used, throughput, maxLatency, memory);
  }

  /** Whether {@code g} meets every eligibility rule of {@code problem}. */
  public static boolean isEligible(GroupingProblem problem, Grouping g) {
    if (g.partitions() < 1 || g.partitions() > problem.maxPartitionsByBuffer()) {
      return false;
    }
    if (g.resourcesUsed() > problem.poolSize() || g.memoryBytes() > problem.poolMemoryBytes()) {
      return false;
    }
    return problem.sloMs() == null || g.maxLatencyMs() <= problem.sloMs();
  }

  static int compareValue(double a, double b) {
    return Tolerance.compare(a, b);
  }

  /** Lexicographic order of two size lists sorted descending; a proper prefix is smaller. */
  static int compareSizeLists(List<Integer> a, List<Integer> b) {
    int common = Math.min(a.size(), b.size());
    for (int i = 0; i < common; i++) {
      int c = Integer.compare(a.get(i), b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }

  private static String exclusionReason(GroupingProblem problem, ProfilePoint point) {
    if (point.size() > problem.poolSize()) {
      return "larger than the pool (k=" + point.size() + " > N=" + problem.poolSize() + ")";
    }
    if (point.memoryBytes() > problem.poolMemoryBytes()) {
      return "one instance needs M(k)=" + point.memoryBytes() + " B, more than the pool's "
          + problem.poolMemoryBytes() + " B";
    }
    if (problem.sloMs() != null && point.latencyMs() > problem.sloMs()) {
      return "T(k)=" + point.latencyMs() + " ms exceeds the SLO of " + problem.sloMs() + " ms";
    }
    return null;
  }

  private static GroupingPlan noPlan(GroupingProblem problem, List<SizeExclusion> excluded, int maxP,
      String reason) {
    return new GroupingPlan(problem.modelId(), problem.objective(), null, List.of(), excluded,
        Math.max(maxP, 0), reason, "none");
  }

  private static List<Grouping> runnersUp(GroupingProblem problem, List<ProfilePoint> items, int maxP,
      Grouping choice) {
    List<Grouping> candidates = new ArrayList<>();
    for (ProfilePoint p : items) {
      long count = Math.min(maxP, problem.poolSize() / p.size());
      if (p.memoryBytes() > 0) {
        count = Math.min(count, problem.poolMemoryBytes() / p.memoryBytes());
      }
      if (count < 1) {
        continue;
      }
      List<Integer> sizes = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        sizes.add(p.size());
      }
      Grouping g = toGrouping(problem, sizes);
      if (!g.sizes().equals(choice.sizes())) {
        candidates.add(g);
      }
    }
    candidates.sort((a, b) -> compare(a, b, problem.objective()));
    return candidates.subList(0, Math.min(RUNNERS_UP, candidates.size()));
  }

  private record Solution(List<Integer> sizes, String method) {}

  private static Solution solveThroughput(GroupingProblem problem, List<ProfilePoint> items, int maxP) {
    int n = problem.poolSize();
    int k = items.size();
    int[] size = new int[k];
    double[] value = new double[k];
    long[] memory = new long[k];
    long maxMemory = 0;
    for (int i = 0; i < k; i++) {
      ProfilePoint p = items.get(i);
      size[i] = p.size();
      value[i] = problem.batchSize() * 1000.0 / p.latencyMs();
      memory[i] = p.memoryBytes();
      maxMemory = Math.max(maxMemory, memory[i]);
    }
    long byPartitions;
    try {
      byPartitions = Math.multiplyExact((long) maxP, maxMemory);
    } catch (ArithmeticException overflow) {
      byPartitions = Long.MAX_VALUE;
    }
    long memoryBound = Math.min(byPartitions, maxMemoryUse(n, size, memory));
    // A bound of Long.MAX_VALUE may stand for a sum past 64 bits (both terms saturate), so it
    // counts as binding: the memory program is exact either way, only slower.
    if (memoryBound > problem.poolMemoryBytes() || memoryBound == Long.MAX_VALUE) {
      return new Solution(solveWithMemory(problem, size, value, memory, maxP), "dp-memory-pareto");
    }
    List<Integer> oneD = solveOneDimension(n, size, value, maxP);
    if (oneD != null) {
      return new Solution(oneD, "dp-1d");
    }
    return new Solution(solveTwoDimensions(n, size, value, maxP), "dp-2d");
  }

  /** Largest {@code sum M(k_i)} over multisets with {@code sum k_i <= n}; a bound, ignoring p. */
  private static long maxMemoryUse(int n, int[] size, long[] memory) {
    long[] best = new long[n + 1];
    long overall = 0;
    for (int r = 1; r <= n; r++) {
      long b = 0;
      for (int i = 0; i < size.length; i++) {
        if (size[i] <= r) {
          b = Math.max(b, saturatedAdd(best[r - size[i]], memory[i]));
        }
      }
      best[r] = b;
      overall = Math.max(overall, b);
    }
    return overall;
  }

  /** {@code a + b} for non-negative {@code a} and {@code b}, or {@link Long#MAX_VALUE} past it. */
  private static long saturatedAdd(long a, long b) {
    return b > Long.MAX_VALUE - a ? Long.MAX_VALUE : a + b;
  }

  /**
   * Best (throughput, fewest partitions) for each exact resource count {@code r}; returns the
   * lexicographically largest optimal size list, or {@code null} when that optimum needs more than
   * {@code maxP} partitions (then the two-dimensional program decides).
   */
  private static List<Integer> solveOneDimension(int n, int[] size, double[] value, int maxP) {
    double[] val = new double[n + 1];
    int[] parts = new int[n + 1];
    boolean[] reach = new boolean[n + 1];
    reach[0] = true;
    for (int r = 1; r <= n; r++) {
      for (int i = 0; i < size.length; i++) {
        int from = r - size[i];
        if (from < 0 || !reach[from]) {
          continue;
        }
        double cv = val[from] + value[i];
        int cp = parts[from] + 1;
        if (!reach[r] || better(cv, cp, val[r], parts[r])) {
          reach[r] = true;
          val[r] = cv;
          parts[r] = cp;
        }
      }
    }
    int bestR = -1;
    for (int r = 1; r <= n; r++) {
      if (reach[r] && (bestR < 0 || better(val[r], parts[r], val[bestR], parts[bestR]))) {
        bestR = r;
      }
    }
    if (parts[bestR] > maxP) {
      return null;
    }
    TreeSet<Integer> states = new TreeSet<>();
    for (int r = 1; r <= n; r++) {
      if (reach[r] && parts[r] == parts[bestR] && compareValue(val[r], val[bestR]) == 0) {
        states.add(r);
      }
    }
    List<Integer> sizes = new ArrayList<>();
    int bound = Integer.MAX_VALUE;
    for (int left = parts[bestR]; left > 0; left--) {
      int chosen = -1;
      TreeSet<Integer> next = new TreeSet<>();
      for (int i = size.length - 1; i >= 0 && chosen < 0; i--) {
        if (size[i] > bound) {
          continue;
        }
        for (int r : states) {
          int from = r - size[i];
          if (from >= 0 && reach[from] && parts[from] == left - 1
              && compareValue(val[from] + value[i], val[r]) == 0) {
            chosen = size[i];
            next.add(from);
          }
        }
      }
      if (chosen < 0) {
        throw new IllegalStateException("grouping reconstruction found no optimal step");
      }
      sizes.add(chosen);
      bound = chosen;
      states = next;
    }
    return sizes;
  }

  private static boolean better(double v, int p, double otherV, int otherP) {
    int c = compareValue(v, otherV);
    return c > 0 || (c == 0 && p < otherP);
  }

  /** {@code f[p][r]} = best throughput with exactly {@code p} partitions over exactly {@code r}. */
  private static List<Integer> solveTwoDimensions(int n, int[] size, double[] value, int maxP) {
    double[][] f = new double[maxP + 1][n + 1];
    for (double[] row : f) {
      Arrays.fill(row, Double.NEGATIVE_INFINITY);
    }
    f[0][0] = 0;
    int bestP = -1;
    int bestR = -1;
    for (int p = 1; p <= maxP; p++) {
      double[] prev = f[p - 1];
      double[] cur = f[p];
      boolean any = false;
      // Item-major, so that the inner loop is a straight pass the JIT can vectorise;
      // -infinity + v stays -infinity, so unreachable states need no branch.
      for (int i = 0; i < size.length; i++) {
        int k = size[i];
        double v = value[i];
        for (int r = k; r <= n; r++) {
          cur[r] = Math.max(cur[r], prev[r - k] + v);
        }
      }
      for (int r = 1; r <= n; r++) {
        double b = cur[r];
        if (b != Double.NEGATIVE_INFINITY) {
          any = true;
          if (bestP < 0 || compareValue(b, f[bestP][bestR]) > 0) {
            bestP = p;
            bestR = r;
          }
        }
      }
      if (!any) {
        break;
      }
    }
    TreeSet<Integer> states = new TreeSet<>();
    for (int r = 1; r <= n; r++) {
      if (f[bestP][r] != Double.NEGATIVE_INFINITY && compareValue(f[bestP][r], f[bestP][bestR]) == 0) {
        states.add(r);
      }
    }
    List<Integer> sizes = new ArrayList<>();
    int bound = Integer.MAX_VALUE;
    for (int p = bestP; p > 0; p--) {
      int chosen = -1;
      TreeSet<Integer> next = new TreeSet<>();
      for (int i = size.length - 1; i >= 0 && chosen < 0; i--) {
        if (size[i] > bound) {
          continue;
        }
        for (int r : states) {
          int from = r - size[i];
          if (from >= 0 && f[p - 1][from] != Double.NEGATIVE_INFINITY
              && compareValue(f[p - 1][from] + value[i], f[p][r]) == 0) {
            chosen = size[i];
            next.add(from);
          }
        }
      }
      if (chosen < 0) {
        throw new IllegalStateException("grouping reconstruction found no optimal step");
      }
      sizes.add(chosen);
      bound = chosen;
      states = next;
    }
    return sizes;
  }

  /** A partial grouping in the memory-aware program; {@code counts[i]} partitions of size i. */
  private record Label(double value, long memory, int[] counts) {}

  private static List<Integer> solveWithMemory(GroupingProblem problem, int[] size, double[] value,
      long[] memory, int maxP) {
    int n = problem.poolSize();
    long cap = problem.poolMemoryBytes();
    List<List<Label>> layer = new ArrayList<>();
    for (int r = 0; r <= n; r++) {
      layer.add(new ArrayList<>());
    }
    layer.get(0).add(new Label(0, 0, new int[size.length]));
    Label best = null;
    int bestParts = 0;
    for (int p = 1; p <= maxP; p++) {
      List<List<Label>> next = new ArrayList<>();
      for (int r = 0; r <= n; r++) {
        next.add(new ArrayList<>());
      }
      boolean any = false;
      for (int r = 0; r <= n; r++) {
        for (Label label : layer.get(r)) {
          for (int i = 0; i < size.length; i++) {
            int to = r + size[i];
            // label.memory() <= cap, so cap - label.memory() cannot overflow; the sum could.
            if (to > n || memory[i] > cap - label.memory()) {
              continue;
            }
            long mem = label.memory() + memory[i];
            int[] counts = label.counts().clone();
            counts[i]++;
            any |= insert(next.get(to), new Label(label.value() + value[i], mem, counts));
          }
        }
      }
      if (!any) {
        break;
      }
      for (List<Label> front : next) {
        for (Label label : front) {
          if (best == null || betterLabel(label, p, best, bestParts)) {
            best = label;
            bestParts = p;
          }
        }
      }
      layer = next;
    }
    List<Integer> sizes = new ArrayList<>();
    for (int i = size.length - 1; i >= 0; i--) {
      for (int c = 0; c < best.counts()[i]; c++) {
        sizes.add(size[i]);
      }
    }
    return sizes;
  }

  private static boolean betterLabel(Label a, int aParts, Label b, int bParts) {
    int c = compareValue(a.value(), b.value());
    if (c != 0) {
      return c > 0;
    }
    if (aParts != bParts) {
      return aParts < bParts;
    }
    return compareCounts(a.counts(), b.counts()) > 0;
  }

  /** Count vectors compared from the largest size down: the order of the descending size lists. */
  private static int compareCounts(int[] a, int[] b) {
    for (int i = a.length - 1; i >= 0; i--) {
      if (a[i] != b[i]) {
        return Integer.compare(a[i], b[i]);
      }
    }
    return 0;
  }

  /**
   * Whether {@code b} can be dropped for {@code a}: {@code a} needs no more memory and is faster, or
   * as fast with a size list that wins the tie-break. Less memory alone never drops a label that
   * ties on throughput: adding the same sizes to both keeps the tie, and the plan order would then
   * pick {@code b}'s extension by its larger size list (a pool of 22 with sizes 2, 4 and 8 at equal
   * speed once kept [4, 4, 4, 4, 4, 2] over [8, 4, 4, 2, 2, 2] this way).
   */
  private static boolean dominates(Label a, Label b) {
    int c = compareValue(a.value(), b.value());
    if (c < 0 || a.memory() > b.memory()) {
      return false;
    }
    return c > 0 || compareCounts(a.counts(), b.counts()) >= 0;
  }

  private static boolean insert(List<Label> front, Label candidate) {
    for (Label existing : front) {
      if (dominates(existing, candidate)) {
        return true;
      }
    }
    front.removeIf(existing -> dominates(candidate, existing));
    front.add(candidate);
    return true;
  }
}

package io.partita.planning.grouping;

import io.partita.planning.ProfilePoint;
import java.util.ArrayList;
import java.util.List;

/**
 * Brute force for {@link GroupingPlanner}: every multiset of measured sizes with sum at most N,
 * checked against the eligibility rules written out again here (not taken from the planner), the
 * best by the plan order.
 */
final class GroupingOracle {
  private GroupingOracle() {}

  /** The best eligible grouping, or {@code null} when none is eligible. */
  static Grouping best(GroupingProblem problem) {
    List<Grouping> all = new ArrayList<>();
    List<ProfilePoint> sizes = problem.profile();
    enumerate(problem, sizes, sizes.size() - 1, problem.poolSize(), new ArrayList<>(), all);
    Grouping best = null;
    for (Grouping g : all) {
      if (eligible(problem, g) && (best == null || GroupingPlanner.compare(g, best, problem.objective()) < 0)) {
        best = g;
      }
    }
    return best;
  }

  /** How many multisets the oracle looked at (sum of sizes at most N, at least one part). */
  static int count(GroupingProblem problem) {
    List<Grouping> all = new ArrayList<>();
    enumerate(problem, problem.profile(), problem.profile().size() - 1, problem.poolSize(), new ArrayList<>(), all);
    return all.size();
  }

  private static void enumerate(GroupingProblem problem, List<ProfilePoint> sizes, int index, int left,
      List<Integer> current, List<Grouping> out) {
    if (index < 0) {
      if (!current.isEmpty()) {
        out.add(GroupingPlanner.toGrouping(problem, current));
      }
      return;
    }
    int k = sizes.get(index).size();
    int added = 0;
    // Zero or more copies of size k, then the smaller sizes.
    while (true) {
      enumerate(problem, sizes, index - 1, left, current, out);
      if (k > left) {
        break;
      }
      current.add(k);
      left -= k;
      added++;
    }
    for (int i = 0; i < added; i++) {
      current.remove(current.size() - 1);
    }
  }

  private static boolean eligible(GroupingProblem problem, Grouping g) {
    int sum = 0;
    long memory = 0;
    for (int k : g.sizes()) {
      ProfilePoint p = problem.profile().stream().filter(x -> x.size() == k).findFirst().orElseThrow();
      sum += k;
      memory += p.memoryBytes();
      if (problem.sloMs() != null && p.latencyMs() > problem.sloMs()) {
        return false;
      }
    }
    long buffers = (long) g.partitions() * problem.bufferBytesPerPartition();
    return sum <= problem.poolSize() && memory <= problem.poolMemoryBytes()
        && buffers <= problem.bufferThresholdBytes();
  }
}

package io.partita.planning.mapping;

import io.partita.planning.Tolerance;
import io.partita.planning.mapping.PreparedMapping.Item;
import io.partita.planning.mapping.PreparedMapping.Service;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The exact optimum of a mapping problem ({@link MappingPlanner#exact}): depth-first branch and
 * bound over the assignments of all services at once, minimising (bottleneck, summed latency).
 * Deterministic: it gives up after {@link MappingPlanner#EXACT_NODE_LIMIT} nodes (a count, not a
 * time) and says so; it runs only within the problem's bounds ({@code exactMaxPlacements},
 * {@code exactMaxResources}).
 */
final class ExactMappingSearch {

  /**
   * The exact optimum over all services at once: the assignment with the lowest
   * {@code (max_r load_r, sum latency)}. Items are branched
   * heaviest first, each over its resources by increasing finish time; a node is cut when
   * {@code max(current bottleneck, (sum_r load_r + sum_{unplaced} min_r w) / R,
   * max_{unplaced} min_r (load_r + w))} already exceeds the best cost found (or equals it and
   * the latency bound cannot beat it). Resources with identical columns of times and equal load
   * are interchangeable, so only the first of them is branched into.
   */
  static ExactMapping search(MappingProblem problem) {
    PreparedMapping prepared = PreparedMapping.of(problem);
    if (!prepared.errors().isEmpty()) {
      return new ExactMapping(false, "not computed: the problem has errors", List.of(), 0, 0, 0, null);
    }
    List<Item> items = new ArrayList<>(prepared.allItems());
    int rc = prepared.resourceCount();
    if (items.size() > problem.exactMaxPlacements() || rc > problem.exactMaxResources()) {
      return new ExactMapping(false, "not computed: " + items.size() + " placements on " + rc
          + " resources exceeds the bound of " + problem.exactMaxPlacements() + " placements on "
          + problem.exactMaxResources() + " resources", List.of(), 0, 0, 0, null);
    }
    items.sort(Comparator.comparingDouble(Item::weight).reversed()
        .thenComparing(Item::serviceId).thenComparing(Item::modelId));
    ExactMappingSearch search = new ExactMappingSearch(items, rc);
    search.run();
    if (search.stopped) {
      return new ExactMapping(false, "not computed: the search stopped after " + MappingPlanner.EXACT_NODE_LIMIT
          + " nodes without proving optimality", List.of(), 0, 0, search.nodes, null);
    }
    List<Assignment> result = new ArrayList<>();
    // Report in the services' planning order and pipeline order, like the heuristic.
    for (Service s : prepared.services()) {
      for (Item it : s.items()) {
        int idx = items.indexOf(it);
        int r = search.bestWhere[idx];
        result.add(new Assignment(s.id(), it.modelId(), prepared.resources().get(r).id(), it.time()[r],
            it.work(r)));
      }
    }
    return new ExactMapping(true, null, result, search.bestCost, search.bestLatency, search.nodes,
        null);
  }

  private final List<Item> items;
  private final int rc;
  private final double[] suffixMinWork;
  private final double[] suffixMinTime;
  private final double[] load;
  private final int[] where;
  int[] bestWhere;
  double bestCost = Double.POSITIVE_INFINITY;
  double bestLatency = Double.POSITIVE_INFINITY;
  long nodes;
  boolean stopped;
  /** {@code twin[r]}: the first resource whose column of times and capacity equal r's (interchangeable). */
  private final int[] twin;

  private ExactMappingSearch(List<Item> items, int rc) {
    this.items = items;
    this.rc = rc;
    int n = items.size();
    twin = new int[rc];
    for (int r = 0; r < rc; r++) {
      twin[r] = r;
      for (int o = 0; o < r; o++) {
        boolean same = true;
        for (Item it : items) {
          if (Double.compare(it.time()[o], it.time()[r]) != 0 || it.capacity()[o] != it.capacity()[r]) {
            same = false;
            break;
          }
        }
        if (same) {
          twin[r] = twin[o];
          break;
        }
      }
    }
    suffixMinWork = new double[n + 1];
    suffixMinTime = new double[n + 1];
    for (int i = n - 1; i >= 0; i--) {
      Item it = items.get(i);
      double minWork = Double.POSITIVE_INFINITY;
      for (int r = 0; r < rc; r++) {
        if (it.runs(r)) {
          minWork = Math.min(minWork, it.work(r));
        }
      }
      suffixMinWork[i] = suffixMinWork[i + 1] + minWork;
      suffixMinTime[i] = suffixMinTime[i + 1] + it.minTime();
    }
    load = new double[rc];
    where = new int[n];
    bestWhere = new int[n];
  }

  void run() {
    dfs(0, 0, 0, 0);
  }

  private void dfs(int i, double currentMax, double totalLoad, double latency) {
    if (stopped) {
      return;
    }
    if (++nodes > MappingPlanner.EXACT_NODE_LIMIT) {
      stopped = true;
      return;
    }
    if (i == items.size()) {
      int c = Tolerance.compare(currentMax, bestCost);
      if (c < 0 || (c == 0 && Tolerance.compare(latency, bestLatency) < 0)) {
        bestCost = currentMax;
        bestLatency = latency;
        bestWhere = where.clone();
      }
      return;
    }
    double bound = Math.max(currentMax, (totalLoad + suffixMinWork[i]) / rc);
    Item it = items.get(i);
    Integer[] order = new Integer[rc];
    int count = 0;
    double itemBound = Double.POSITIVE_INFINITY;
    for (int r = 0; r < rc; r++) {
      if (it.runs(r)) {
        order[count++] = r;
        itemBound = Math.min(itemBound, load[r] + it.work(r));
      }
    }
    bound = Math.max(bound, itemBound);
    if (cut(bound, latency + suffixMinTime[i])) {
      return;
    }
    Integer[] candidates = Arrays.copyOf(order, count);
    Arrays.sort(candidates, Comparator.<Integer>comparingDouble(r -> load[r] + it.work(r))
        .thenComparingDouble(r -> it.time()[r]).thenComparingInt(r -> r));
    for (int c = 0; c < candidates.length; c++) {
      int r = candidates[c];
      if (interchangeableWithEarlier(candidates, c)) {
        continue;
      }
      double w = it.work(r);
      double newMax = Math.max(currentMax, load[r] + w);
      if (cut(newMax, latency + it.time()[r] + suffixMinTime[i + 1])) {
        continue;
      }
      load[r] += w;
      where[i] = r;
      dfs(i + 1, newMax, totalLoad + w, latency + it.time()[r]);
      load[r] -= w;
    }
  }

  /** An earlier candidate with the same column of times and the same load gives the same subtree. */
  private boolean interchangeableWithEarlier(Integer[] candidates, int c) {
    int r = candidates[c];
    for (int e = 0; e < c; e++) {
      int o = candidates[e];
      if (twin[o] == twin[r] && load[o] == load[r]) {
        return true;
      }
    }
    return false;
  }

  private boolean cut(double costBound, double latencyBound) {
    int c = Tolerance.compare(costBound, bestCost);
    return c > 0 || (c == 0 && Tolerance.compare(latencyBound, bestLatency) >= 0);
  }
}

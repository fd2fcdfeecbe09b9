package io.partita.planning.mapping;

import io.partita.planning.Tolerance;
import io.partita.planning.mapping.PreparedMapping.Item;
import io.partita.planning.mapping.PreparedMapping.Service;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Maps the models of services onto resources of several kinds from a timing matrix
 * (docs/concepts.md, method 2).
 *
 * <p><b>Formula.</b> A mapping puts each (service, model) on one resource {@code r(m)} with
 * {@code T[m][r(m)]} known. The load of a resource is {@code load_r = sum_{m on r} rate_m * T[m][r]}
 * (busy ms per second; {@code > 1000} means it cannot keep up). The cost of a mapping is the
 * bottleneck {@code max_r load_r}, the inverse of the sustainable throughput; ties (relative
 * 1e-9) go to the lower {@code sum_m T[m][r(m)]} along the services' pipelines.
 *
 * <p><b>Order of services.</b> By demand {@code sum_m rate_m * min_r T[m][r]} descending, ties by
 * service id; each service is mapped with the loads of the services before it already on the
 * resources, and both schemes' costs count those loads.
 *
 * <p><b>Model-first</b>, per service: models by weight {@code rate_m * min_r T[m][r]} descending
 * (ties by model id); each goes to the resource with the smallest finish time
 * {@code load_r + rate_m * T[m][r]}, ties to the smaller {@code T[m][r]}, then the smaller
 * resource id.
 *
 * <p><b>Hardware-first</b>, per service. The design leaves two things open; this class decides:
 * <ul>
 *   <li>"Fastest resource" for a service means the lowest mean relative time
 *       {@code mean_m T[m][r] / min_r' T[m][r']} over the service's models that can run on
 *       {@code r} (1.0 = best for each of them); ties by resource id. Resources that run none of
 *       them are not visited.
 *   <li>A resource may take several models: the resources are visited fastest to slowest in rounds,
 *       and in each round each resource takes at most one model, until every model is placed. A
 *       resource takes, among the unplaced models for which it gives the smallest finish time
 *       {@code load_r + rate_m * T[m][r]} right now, the one that gains most by running there: the
 *       second-best time {@code min_{r' != r} T[m][r']} minus {@code T[m][r]} (infinite when
 *       {@code r} is the only resource that can run it); ties to the heavier model, then the
 *       model id. Each round places at least one model (the first visited resource that is some
 *       model's best takes one), so the scheme ends.
 * </ul>
 *
 * <p><b>Choice.</b> Per service, the scheme whose mapping has the lower cost, then the lower
 * pipeline latency; on a full tie model-first. Then an improvement pass (moves and swaps that lower
 * the sorted load vector, see {@link #improve}) runs over all services together from four
 * starting points: the per-service choice, model-first for every service, hardware-first for
 * every service, and model-first over all services' models at once (heaviest first, ignoring the
 * service order); the lowest (cost, latency) result is the plan, ties to the earlier start. The
 * pass never makes a mapping worse, so the plan is at least as good as the per-service choice
 * ({@code improvement.schemesCostMsPerSecond}). This pass is an addition to the design (see docs/internals/departures.md).
 * The exact optimum over all services at once
 * (branch and bound, {@link #exact}) is computed when the problem has at most
 * {@code exactMaxPlacements} placements and {@code exactMaxResources} resources, and the plan
 * reports {@code gap = cost / optimal cost}. The problem is read through {@link PreparedMapping} and
 * the branch and bound lives in {@link ExactMappingSearch}.
 *
 * <p><b>Guarantees.</b> No model lands on a resource without a time for it; a model that can run
 * nowhere is an error in the plan naming the model and service, not an exception; the result does
 * not depend on the order of resources, services or matrix rows in the input (all ties are broken
 * by ids). The heuristic is not optimal; the exact optimum is.
 */
public final class MappingPlanner {

  /**
   * The branch and bound gives up (and says so) after this many nodes, so that no problem within
   * the bounds can stall a plan; a count, not a time, so the outcome is deterministic.
   */
  public static final long EXACT_NODE_LIMIT = 20_000_000L;

  private MappingPlanner() {}

  /**
   * Plans {@code problem}: both schemes per service and the choice, the improvement pass, and the
   * exact optimum with the gap to it when the problem is small enough.
   */
  public static MappingPlan plan(MappingProblem problem) {
    return plan(problem, IMPROVEMENT_CANDIDATE_BUDGET);
  }

  /** As above, with another candidate budget of the improvement pass (to measure what the budget costs). */
  static MappingPlan plan(MappingProblem problem, long candidateBudget) {
    PreparedMapping prepared = PreparedMapping.of(problem);
    if (!prepared.errors().isEmpty()) {
      return new MappingPlan(false, prepared.errors(), List.of(), MappingPlan.Improvement.NONE, List.of(), List.of(), 0, 0,
          new ExactMapping(false, "not computed: the problem has errors", List.of(), 0, 0, 0, null));
    }
    int rc = prepared.resourceCount();
    double[] load = new double[rc];
    List<ServiceMapping> mappings = new ArrayList<>();
    List<Item> placedItems = new ArrayList<>();
    List<Integer> placedWhere = new ArrayList<>();
    for (Service s : prepared.services()) {
      double[] mfLoad = load.clone();
      int[] mf = modelFirst(s, mfLoad);
      double[] hfLoad = load.clone();
      int[] hf = hardwareFirst(s, hfLoad, rc);
      SchemeMapping mfMapping = describe(MappingScheme.MODEL_FIRST, prepared, s, mf, mfLoad);
      SchemeMapping hfMapping = describe(MappingScheme.HARDWARE_FIRST, prepared, s, hf, hfLoad);
      int c = Tolerance.compare(mfMapping.costMsPerSecond(), hfMapping.costMsPerSecond());
      MappingScheme pick;
      String why;
      if (c != 0) {
        pick = c < 0 ? MappingScheme.MODEL_FIRST : MappingScheme.HARDWARE_FIRST;
        why = "lower bottleneck load";
      } else {
        int l = Tolerance.compare(mfMapping.pipelineLatencyMs(), hfMapping.pipelineLatencyMs());
        pick = l <= 0 ? MappingScheme.MODEL_FIRST : MappingScheme.HARDWARE_FIRST;
        why = l != 0 ? "equal bottleneck load, lower pipeline latency"
            : "equal bottleneck load and pipeline latency: model-first by rule";
      }
      mappings.add(new ServiceMapping(s.id(), s.demand(), mfMapping, hfMapping, pick, why));
      int[] where = pick == MappingScheme.MODEL_FIRST ? mf : hf;
      load = pick == MappingScheme.MODEL_FIRST ? mfLoad : hfLoad;
      for (int i = 0; i < s.items().size(); i++) {
        placedItems.add(s.items().get(i));
        placedWhere.add(where[i]);
      }
    }
    double schemesCost = max(load);
    // The improvement pass from four starting points; the first of equal results wins.
    List<String> startNames = List.of("per-service choice", "model-first for every service",
        "hardware-first for every service", "model-first over all services at once");
    int[] where = null;
    int steps = 0;
    String start = null;
    for (String name : startNames) {
      double[] startLoad;
      int[] startWhere;
      switch (name) {
        case "per-service choice" -> {
          startLoad = load;
          startWhere = placedWhere.stream().mapToInt(Integer::intValue).toArray();
        }
        case "model-first for every service" -> {
          startLoad = new double[rc];
          startWhere = schemeForAll(prepared, MappingScheme.MODEL_FIRST, startLoad);
        }
        case "hardware-first for every service" -> {
          startLoad = new double[rc];
          startWhere = schemeForAll(prepared, MappingScheme.HARDWARE_FIRST, startLoad);
        }
        default -> {
          startLoad = new double[rc];
          startWhere = modelFirst(new PreparedMapping.Service("*", placedItems, 0), startLoad);
        }
      }
      int startSteps = improve(placedItems, startWhere, startLoad, candidateBudget);
      if (where == null) {
        where = startWhere;
        load = startLoad;
        steps = startSteps;
        start = name;
        continue;
      }
      int c = Tolerance.compare(max(startLoad), max(load));
      if (c < 0 || (c == 0 && Tolerance.compare(latencyOf(placedItems, startWhere),
          latencyOf(placedItems, where)) < 0)) {
        where = startWhere;
        load = startLoad;
        steps = startSteps;
        start = name;
      }
    }
    List<Assignment> chosen = new ArrayList<>();
    for (int i = 0; i < placedItems.size(); i++) {
      Item it = placedItems.get(i);
      int r = where[i];
      chosen.add(new Assignment(it.serviceId(), it.modelId(), prepared.resources().get(r).id(),
          it.time()[r], it.work(r)));
    }
    double cost = max(load);
    double latency = chosen.stream().mapToDouble(Assignment::latencyMs).sum();
    ExactMapping exact = exact(problem);
    if (exact.computed()) {
      exact = exact.withGap(exact.costMsPerSecond() > 0 ? cost / exact.costMsPerSecond() : 1.0);
    }
    return new MappingPlan(true, List.of(), mappings, new MappingPlan.Improvement(schemesCost, start, steps), chosen,
        loads(prepared, load), cost, latency, exact);
  }

  /** The improvement pass stops after this many steps per placed model, to bound its time. */
  static final int IMPROVEMENT_STEPS_PER_MODEL = 10;

  /**
   * The improvement pass of one start also stops before a step that would take it past this many
   * candidates examined (moves and swaps), a count, not a time, so the plan stays deterministic.
   * A step examines {@code n (R - 1)} moves and {@code n (n - 1) / 2} swaps: 200 placements on 32
   * resources take 26,000 a step and never reach it (129 steps in {@code MappingBenchmark}); 500
   * on 8 take 128,000 and stop after 31 steps instead of up to 5,000.
   */
  static final long IMPROVEMENT_CANDIDATE_BUDGET = 4_000_000L;

  /**
   * The improvement pass over the schemes' combined mapping (all services together). It lowers the
   * sorted load vector (descending) lexicographically, the "leximax" order whose first term is the
   * bottleneck, then the summed latency. A step moves one model to another resource that can run it,
   * or swaps two models on different resources that can run each other; it changes two loads only,
   * so it lowers the leximax order exactly when the larger of the two new loads is lower than the
   * larger of the two old ones, or equal with a lower smaller one (common loads cancel out). Each
   * step takes the candidate that lowers the larger of the two loads most (then the smaller, then
   * the latency); ties go to the first in (model, resource) order. Every step lowers the order
   * strictly, so the mapping never gets worse; the pass ends when no step improves, after
   * {@link #IMPROVEMENT_STEPS_PER_MODEL} steps per model, or before a step that would pass
   * {@link #IMPROVEMENT_CANDIDATE_BUDGET} candidates. Returns the number of steps.
   */
  private static int improve(List<Item> items, int[] where, double[] load, long budget) {
    int rc = load.length;
    int n = items.size();
    int limit = IMPROVEMENT_STEPS_PER_MODEL * n;
    long perStep = (long) n * (rc - 1) + (long) n * (n - 1) / 2;
    long examined = 0;
    int steps = 0;
    Step best = new Step();
    while (steps < limit && examined + perStep <= budget) {
      examined += perStep;
      best.reset();
      for (int i = 0; i < n; i++) {
        Item a = items.get(i);
        int from = where[i];
        double lf = load[from];
        double wf = a.work(from);
        for (int r = 0; r < rc; r++) {
          if (r != from && a.runs(r)) {
            best.offer(lf, load[r], lf - wf, load[r] + a.work(r), a.time()[from] - a.time()[r], i, -1, r);
          }
        }
        for (int j = i + 1; j < n; j++) {
          int to = where[j];
          if (to == from || !a.runs(to)) {
            continue;
          }
          Item b = items.get(j);
          if (!b.runs(from)) {
            continue;
          }
          best.offer(lf, load[to], lf - wf + b.work(from), load[to] - b.work(to) + a.work(to),
              a.time()[from] + b.time()[to] - a.time()[to] - b.time()[from], i, j, to);
        }
      }
      if (best.i < 0) {
        return steps;
      }
      Item a = items.get(best.i);
      int from = where[best.i];
      load[from] -= a.work(from);
      load[best.r] += a.work(best.r);
      where[best.i] = best.r;
      if (best.j >= 0) {
        Item b = items.get(best.j);
        load[best.r] -= b.work(best.r);
        load[from] += b.work(from);
        where[best.j] = from;
      }
      steps++;
    }
    return steps;
  }

  /**
   * The best improving step seen so far. A step turning loads {@code (x1, x2)} into
   * {@code (y1, y2)} and lowering the latency by {@code latencyDrop} improves when it lowers the
   * leximax order (then the latency); its gain is {@code (max x - max y, min x - min y,
   * latencyDrop)}, compared lexicographically; the first of equal gains is kept.
   */
  private static final class Step {
    double hi;
    double lo;
    double lat;
    int i;
    int j;
    int r;

    void reset() {
      i = -1;
    }

    void offer(double x1, double x2, double y1, double y2, double latencyDrop, int i, int j, int r) {
      double hiX = Math.max(x1, x2);
      double hiY = Math.max(y1, y2);
      if (hiY > hiX + Tolerance.RELATIVE * Math.max(1.0, hiX)) {
        return; // the fast, common rejection; the exact rule follows
      }
      double loX = Math.min(x1, x2);
      double loY = Math.min(y1, y2);
      int c = Tolerance.compare(hiY, hiX);
      if (c > 0) {
        return;
      }
      if (c == 0) {
        int d = Tolerance.compare(loY, loX);
        if (d > 0 || (d == 0 && Tolerance.compare(latencyDrop, 0) <= 0)) {
          return;
        }
      }
      double gHi = hiX - hiY;
      double gLo = loX - loY;
      if (this.i >= 0) {
        int k = Tolerance.compare(gHi, hi);
        if (k == 0) {
          k = Tolerance.compare(gLo, lo);
        }
        if (k == 0) {
          k = Tolerance.compare(latencyDrop, lat);
        }
        if (k <= 0) {
          return;
        }
      }
      hi = gHi;
      lo = gLo;
      lat = latencyDrop;
      this.i = i;
      this.j = j;
      this.r = r;
    }
  }

  private static double latencyOf(List<Item> items, int[] where) {
    double sum = 0;
    for (int i = 0; i < items.size(); i++) {
      sum += items.get(i).time()[where[i]];
    }
    return sum;
  }

  /**
   * Maps all services with one scheme only (services in the same order, loads carried over).
   * The plan never needs it; tests and the gap evaluation compare it with the exact optimum.
   * Returns {@code null} when a model can run nowhere.
   */
  public static SchemeMapping runScheme(MappingProblem problem, MappingScheme scheme) {
    PreparedMapping prepared = PreparedMapping.of(problem);
    if (!prepared.errors().isEmpty()) {
      return null;
    }
    double[] load = new double[prepared.resourceCount()];
    int[] where = schemeForAll(prepared, scheme, load);
    List<Item> items = prepared.allItems();
    List<Assignment> all = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      Item it = items.get(i);
      all.add(new Assignment(it.serviceId(), it.modelId(), prepared.resources().get(where[i]).id(),
          it.time()[where[i]], it.work(where[i])));
    }
    return new SchemeMapping(scheme, all, max(load), latencyOf(items, where));
  }

  /** One scheme for every service in planning order; {@code where} follows {@code allItems()}. */
  private static int[] schemeForAll(PreparedMapping prepared, MappingScheme scheme, double[] load) {
    int[] where = new int[prepared.allItems().size()];
    int at = 0;
    for (Service s : prepared.services()) {
      int[] w = scheme == MappingScheme.MODEL_FIRST ? modelFirst(s, load)
          : hardwareFirst(s, load, prepared.resourceCount());
      System.arraycopy(w, 0, where, at, w.length);
      at += w.length;
    }
    return where;
  }

  /**
   * The exact optimum over all services at once: the assignment with the lowest
   * {@code (max_r load_r, sum latency)}, by depth-first branch and bound. Items are branched
   * heaviest first, each over its resources by increasing finish time; a node is cut when
   * {@code max(current bottleneck, (sum_r load_r + sum_{unplaced} min_r w) / R,
   * max_{unplaced} min_r (load_r + w))} already exceeds the best cost found (or equals it and
   * the latency bound cannot beat it). Resources with identical columns of times and equal load
   * are interchangeable, so only the first of them is branched into. Only for problems within the
   * problem's bounds, and only if the search ends within {@link #EXACT_NODE_LIMIT} nodes.
   */
  public static ExactMapping exact(MappingProblem problem) {
    return ExactMappingSearch.search(problem);
  }

  /** Model-first: heaviest first, each to its smallest finish time. Updates {@code load}. */
  private static int[] modelFirst(Service s, double[] load) {
    List<Item> items = s.items();
    Integer[] order = new Integer[items.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.<Integer>comparingDouble(i -> -items.get(i).weight())
        .thenComparing(i -> items.get(i).modelId()));
    int[] where = new int[items.size()];
    for (int i : order) {
      Item it = items.get(i);
      int best = -1;
      for (int r = 0; r < load.length; r++) {
        if (!it.runs(r)) {
          continue;
        }
        if (best < 0) {
          best = r;
          continue;
        }
        int c = Tolerance.compare(load[r] + it.work(r), load[best] + it.work(best));
        if (c < 0 || (c == 0 && it.time()[r] < it.time()[best])) {
          best = r;
        }
      }
      where[i] = best;
      load[best] += it.work(best);
    }
    return where;
  }

  /** Hardware-first: resources fastest first, in rounds; see the class comment. Updates {@code load}. */
  private static int[] hardwareFirst(Service s, double[] load, int rc) {
    List<Item> items = s.items();
    List<Integer> visit = new ArrayList<>();
    double[] speed = new double[rc];
    for (int r = 0; r < rc; r++) {
      double sum = 0;
      int count = 0;
      for (Item it : items) {
        if (it.runs(r)) {
          sum += it.time()[r] / it.minTime();
          count++;
        }
      }
      if (count > 0) {
        speed[r] = sum / count;
        visit.add(r);
      }
    }
    visit.sort(Comparator.<Integer>comparingDouble(r -> speed[r]).thenComparingInt(r -> r));
    int[] where = new int[items.size()];
    boolean[] placed = new boolean[items.size()];
    int left = items.size();
    while (left > 0) {
      int placedThisRound = 0;
      for (int r : visit) {
        int pick = -1;
        double pickGain = 0;
        for (int i = 0; i < items.size(); i++) {
          Item it = items.get(i);
          if (placed[i] || !it.runs(r) || !isBestFinish(it, r, load)) {
            continue;
          }
          double gain = secondBestElsewhere(it, r) - it.time()[r];
          if (pick < 0 || gain > pickGain
              || (gain == pickGain && (Tolerance.compare(it.weight(), items.get(pick).weight()) > 0
                  || (Tolerance.compare(it.weight(), items.get(pick).weight()) == 0
                      && it.modelId().compareTo(items.get(pick).modelId()) < 0)))) {
            pick = i;
            pickGain = gain;
          }
        }
        if (pick >= 0) {
          placed[pick] = true;
          where[pick] = r;
          load[r] += items.get(pick).work(r);
          left--;
          placedThisRound++;
        }
        if (left == 0) {
          break;
        }
      }
      if (placedThisRound == 0) {
        throw new IllegalStateException("hardware-first made no progress in a round");
      }
    }
    return where;
  }

  private static boolean isBestFinish(Item it, int r, double[] load) {
    double here = load[r] + it.work(r);
    for (int o = 0; o < load.length; o++) {
      if (o != r && it.runs(o) && Tolerance.compare(load[o] + it.work(o), here) < 0) {
        return false;
      }
    }
    return true;
  }

  private static double secondBestElsewhere(Item it, int r) {
    double best = Double.POSITIVE_INFINITY;
    for (int o = 0; o < it.time().length; o++) {
      if (o != r && it.runs(o)) {
        best = Math.min(best, it.time()[o]);
      }
    }
    return best;
  }

  private static SchemeMapping describe(MappingScheme scheme, PreparedMapping prepared, Service s, int[] where,
      double[] loadAfter) {
    List<Assignment> assignments = new ArrayList<>();
    double latency = 0;
    for (int i = 0; i < s.items().size(); i++) {
      Item it = s.items().get(i);
      int r = where[i];
      assignments.add(new Assignment(s.id(), it.modelId(), prepared.resources().get(r).id(),
          it.time()[r], it.work(r)));
      latency += it.time()[r];
    }
    return new SchemeMapping(scheme, assignments, max(loadAfter), latency);
  }

  private static List<ResourceLoad> loads(PreparedMapping prepared, double[] load) {
    List<ResourceLoad> out = new ArrayList<>();
    for (int r = 0; r < load.length; r++) {
      ResourceSpec spec = prepared.resources().get(r);
      out.add(new ResourceLoad(spec.id(), spec.kind(), load[r]));
    }
    return out;
  }

  private static double max(double[] values) {
    double m = 0;
    for (double v : values) {
      m = Math.max(m, v);
    }
    return m;
  }
}

package io.partita.planner.plan;

import static io.partita.planner.plan.Plans.POOLS;
import static io.partita.planner.plan.Plans.poolIds;

import io.partita.avro.HostEnvironment;
import io.partita.avro.TimingEvent;
import io.partita.planner.plan.MappingPlans.ChosenVersions;
import io.partita.planning.mapping.ResourceSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The mapping's timing matrix ({@link MappingPlans#mappingProblem(PlanInputs, PlanSettings,
 * ChosenVersions)}), kept between passes: a pass recomputes the times of the (model, host) pairs
 * whose timings or chosen version changed and the rows of the resources they belong to, instead
 * of walking every timing of every model (2 million at 1,000 hosts and 500 models). The layout of
 * resources (pools, or classes of alike pools) is recomputed every pass, and a change of it
 * recomputes everything. What {@link #update} returns equals {@link #full} on the same inputs
 * ({@code IncrementalPlanningTest} compares the planner with one that builds it whole every pass).
 * Pure apart from its cache.
 */
public final class MappingMatrix {
  /** Which resource each pool belongs to, and each resource's kind and pools' hosts. */
  record Layout(Map<String, String> resourceOf, SortedMap<String, List<String>> members, Map<String, String> kindOf) {}

  private Layout layout;
  /**
   * A column per pool ({@code host/pool}) seen since the matrix was last built whole, kept while
   * hosts come and go so that the columns of the others do not move; rebuilt whole once it holds
   * twice the pools of the layout (hosts that left for good).
   */
  private final Map<String, Integer> columns = new HashMap<>();
  /** resource -> the columns of its pools, in the layout's order of its hosts. */
  private final Map<String, int[]> memberColumns = new HashMap<>();
  /**
   * model -> per column, the pool's best time of the version chosen on its host (NaN: none). An
   * array read per pool: the medians of a class of 250 pools for 500 models were 125,000 map
   * look-ups with keys built for each, two thirds of a churn pass's mapping stage.
   */
  private final Map<String, double[]> poolTimes = new HashMap<>();
  /** model -> resource -> time (the median of its pools' times). */
  private final Map<String, SortedMap<String, Double>> rows = new HashMap<>();
  /** Room for one resource's pool times while its median is taken. */
  private double[] scratch = new double[0];

  /** The matrix built from nothing. */
  public static MappingPlans.Matrix full(PlanInputs in, PlanSettings settings, ChosenVersions chosen) {
    return new MappingMatrix().update(in, settings, chosen, Map.of(), Set.of());
  }

  /**
   * The matrix of today's inputs, recomputing what changed since the last call.
   *
   * @param changedHosts model -> hosts whose timings of it, chosen version of it or environment changed
   * @param changedModels models whose every time is recomputed (catalog changes)
   * @return null when there is no resource
   */
  public MappingPlans.Matrix update(PlanInputs in, PlanSettings settings, ChosenVersions chosen,
      Map<String, ? extends Collection<String>> changedHosts, Set<String> changedModels) {
    Layout now = layout(in, settings.mappingPoolLimit());
    if (layout == null || !now.members().keySet().equals(layout.members().keySet())
        || !now.kindOf().equals(layout.kindOf()) || columns.size() > 2 * now.resourceOf().size() + 64) {
      layout = now;
      columns.clear();
      poolTimes.clear();
      rows.clear();
      index();
    } else if (!now.equals(layout)) {
      moved(in, chosen, now);
    }
    Set<String> models = in.catalogModels().keySet();
    poolTimes.keySet().retainAll(models);
    rows.keySet().retainAll(models);
    for (String model : models) {
      if (!rows.containsKey(model) || changedModels.contains(model)) {
        poolTimes.put(model, allPoolTimes(in, model, chosen));
        rows.put(model, row(model, layout.members().keySet()));
        continue;
      }
      Collection<String> hosts = changedHosts.get(model);
      if (hosts == null || hosts.isEmpty()) {
        continue;
      }
      double[] times = times(model);
      Set<String> resources = new TreeSet<>();
      for (String host : hosts) {
        for (String pool : POOLS) {
          String poolKey = host + Keys.SEP + pool;
          String resource = layout.resourceOf().get(poolKey);
          if (resource == null) {
            continue;
          }
          Double t = poolTime(in, model, chosen.of(model, host), host, pool);
          times[columns.get(poolKey)] = t == null ? Double.NaN : t;
          resources.add(resource);
        }
      }
      SortedMap<String, Double> row = rows.get(model);
      SortedMap<String, Double> fresh = row(model, resources);
      resources.forEach(r -> {
        if (fresh.containsKey(r)) {
          row.put(r, fresh.get(r));
        } else {
          row.remove(r);
        }
      });
    }
    if (layout.members().isEmpty()) {
      return null;
    }
    List<ResourceSpec> resources = new ArrayList<>();
    Map<String, String> hostOf = new TreeMap<>();
    layout.members().forEach((id, hosts) -> {
      resources.add(new ResourceSpec(id, layout.kindOf().get(id), hosts.size()));
      hostOf.put(id, hosts.get(0));
    });
    Map<String, Map<String, Double>> latency = new TreeMap<>();
    for (String model : models) {
      latency.put(model, rows.get(model));
    }
    return new MappingPlans.Matrix(resources, latency, hostOf);
  }

  /** Gives every pool of the layout a column (keeping the ones it had) and each resource its pools' columns. */
  private void index() {
    memberColumns.clear();
    layout.members().forEach((resource, hosts) -> {
      String pool = layout.kindOf().get(resource);
      int[] cols = new int[hosts.size()];
      for (int i = 0; i < cols.length; i++) {
        cols[i] = columns.computeIfAbsent(hosts.get(i) + Keys.SEP + pool, k -> columns.size());
      }
      memberColumns.put(resource, cols);
    });
  }

  /** The model's pool times, grown to every column there is (new columns NaN). */
  private double[] times(String model) {
    double[] times = poolTimes.get(model);
    if (times.length < columns.size()) {
      int old = times.length;
      times = Arrays.copyOf(times, Math.max(columns.size(), 2 * old));
      Arrays.fill(times, old, times.length, Double.NaN);
      poolTimes.put(model, times);
    }
    return times;
  }

  /**
   * The same resources, other pools in some of them (hosts joined, left or changed hardware): the
   * moved pools' times and the rows of the resources they left or joined, for every model.
   */
  private void moved(PlanInputs in, ChosenVersions chosen, Layout now) {
    Set<String> pools = new TreeSet<>(layout.resourceOf().keySet());
    pools.addAll(now.resourceOf().keySet());
    Set<String> movedPools = new TreeSet<>();
    Set<String> resources = new TreeSet<>();
    for (String pool : pools) {
      String before = layout.resourceOf().get(pool);
      String after = now.resourceOf().get(pool);
      if (!Objects.equals(before, after)) {
        movedPools.add(pool);
        if (before != null) {
          resources.add(before);
        }
        if (after != null) {
          resources.add(after);
        }
      }
    }
    layout = now;
    index();
    for (String model : poolTimes.keySet()) {
      double[] times = times(model);
      for (String poolKey : movedPools) {
        Integer column = columns.get(poolKey);
        if (column == null) {
          continue; // a pool that left before it ever had a column: nothing to forget
        }
        int cut = poolKey.lastIndexOf(Keys.SEP);
        String host = poolKey.substring(0, cut);
        Double t = now.resourceOf().containsKey(poolKey)
            ? poolTime(in, model, chosen.of(model, host), host, poolKey.substring(cut + 1)) : null;
        times[column] = t == null ? Double.NaN : t;
      }
      SortedMap<String, Double> row = rows.get(model);
      SortedMap<String, Double> fresh = row(model, resources);
      for (String r : resources) {
        if (fresh.containsKey(r)) {
          row.put(r, fresh.get(r));
        } else {
          row.remove(r);
        }
      }
    }
  }

  /** The times of the model on the given resources: the median of their pools' times. */
  private SortedMap<String, Double> row(String model, Collection<String> resources) {
    double[] times = times(model);
    SortedMap<String, Double> out = new TreeMap<>();
    for (String resource : resources) {
      int[] cols = memberColumns.get(resource);
      if (scratch.length < cols.length) {
        scratch = new double[cols.length];
      }
      int n = 0;
      for (int c : cols) {
        double t = times[c];
        if (!Double.isNaN(t)) {
          scratch[n++] = t;
        }
      }
      if (n > 0) {
        out.put(resource, MappingPlans.median(scratch, n));
      }
    }
    return out;
  }

  /**
   * Every pool's best time of the model, in one walk of its timings (each on a pool of the layout,
   * of the version chosen there): a look-up per pool was a million per pass at 2,000 pools and 500
   * models.
   */
  private double[] allPoolTimes(PlanInputs in, String model, ChosenVersions chosen) {
    double[] times = new double[columns.size()];
    Arrays.fill(times, Double.NaN);
    String prefix = model + Keys.SEP;
    for (TimingEvent e : in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      String pool = e.getHost() + Keys.SEP + e.getPool();
      if (layout.resourceOf().containsKey(pool) && e.getVersion().equals(chosen.of(model, e.getHost()))) {
        int column = columns.get(pool);
        double t = Plans.batchTimeMs(e, in.hosts().get(e.getHost())) / e.getBatch();
        times[column] = Double.isNaN(times[column]) ? t : Math.min(times[column], t);
      }
    }
    return times;
  }

  /**
   * The best per-item time of one version on one pool, or null: a batch's time ({@link
   * Plans#batchTimeMs}, the median stretched under a CPU quota) over the batch.
   */
  private static Double poolTime(PlanInputs in, String model, String version, String host, String pool) {
    if (version == null) {
      return null;
    }
    String prefix = Keys.partition(model, version, host, pool) + Keys.SEP;
    Double best = null;
    HostEnvironment env = in.hosts().get(host);
    for (TimingEvent e : in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      double t = Plans.batchTimeMs(e, env) / e.getBatch();
      best = best == null ? t : Math.min(best, t);
    }
    return best;
  }

  /**
   * The resources: one per pool ({@code host/pool}) up to {@code limit} pools, else one per class
   * of alike pools ({@link MappingPlans#hardware}, named by {@link MappingPlans#className}).
   */
  static Layout layout(PlanInputs in, int limit) {
    Map<String, String> resourceOf = new HashMap<>();
    SortedMap<String, List<String>> members = new TreeMap<>();
    Map<String, String> kindOf = new HashMap<>();
    List<String[]> pools = new ArrayList<>();
    for (HostEnvironment env : in.hosts().values()) {
      for (String pool : POOLS) {
        if (!poolIds(env, pool).isEmpty()) {
          pools.add(new String[] {env.getHostId(), pool});
        }
      }
    }
    if (pools.size() <= limit) {
      for (String[] p : pools) {
        String id = p[0] + Keys.SEP + p[1];
        resourceOf.put(id, id);
        members.put(id, List.of(p[0]));
        kindOf.put(id, p[1]);
      }
      return new Layout(resourceOf, members, kindOf);
    }
    SortedMap<String, List<String>> classes = new TreeMap<>();
    for (String[] p : pools) {
      classes.computeIfAbsent(MappingPlans.hardware(in.hosts().get(p[0]), p[1]), k -> new ArrayList<>()).add(p[0]);
    }
    Map<String, Integer> named = new HashMap<>();
    classes.forEach((signature, hosts) -> {
      String pool = signature.substring(0, signature.indexOf('|'));
      String name = MappingPlans.className(in.hosts().get(hosts.get(0)), pool);
      int seen = named.merge(name, 1, Integer::sum);
      String id = seen == 1 ? name : name + " #" + seen;
      members.put(id, List.copyOf(hosts));
      kindOf.put(id, pool);
      hosts.forEach(h -> resourceOf.put(h + Keys.SEP + pool, id));
    });
    return new Layout(resourceOf, members, kindOf);
  }
}

package io.partita.planner.plan;

import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.TimingEvent;
import io.partita.planning.ProfilePoint;
import io.partita.planning.version.HostFacts;
import io.partita.planning.version.VersionObjective;
import io.partita.planning.version.VersionRequirements;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What every plan table reads from the input tables: the catalog's models, the timing matrix of
 * one model version on one pool, a pool's resources and memory, the grouping profile, demand and
 * requirements. Pure: no Kafka, no clock; the same {@link PlanInputs} give the same answers. One
 * class per plan table builds on it: {@link VersionPlans}, {@link MappingPlans}, {@link
 * PartitionPlans}, {@link AssignmentPlans}, {@link RoutePlans}.
 */
public final class Plans {
  public static final String CPU = "cpu";
  public static final String GPU = "gpu";
  public static final List<String> POOLS = List.of(CPU, GPU);
  /** Baseline score of a host that published none, so that predictions still have a ratio. */
  public static final double NO_BASELINE_SCORE = 1.0;

  private Plans() {}

  // ---------------------------------------------------------------- inputs

  /** The models that have at least one version in the catalog, sorted. */
  public static SortedMap<String, List<ModelVersion>> catalogModels(PlanInputs in) {
    return in.catalogModels();
  }

  /** The single-partition measurements of one model version on one pool of one host. */
  public static List<TimingEvent> timingsOf(PlanInputs in, String model, String version, String host, String pool) {
    String prefix = Keys.partition(model, version, host, pool) + Keys.SEP;
    return new ArrayList<>(in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values());
  }

  /** The resources of one pool of a host: CPU ids or GPU indices, ascending. */
  public static List<Integer> poolIds(HostEnvironment env, String pool) {
    List<Integer> ids = new ArrayList<>();
    if (pool.equals(CPU)) {
      int cores = env.getUsableCores() > 0 ? env.getUsableCores() : env.getLogicalCores();
      if (env.getUsableCpuIds().size() == cores) {
        ids.addAll(env.getUsableCpuIds());
        ids.sort(Comparator.naturalOrder());
      } else {
        for (int i = 0; i < cores; i++) {
          ids.add(i);
        }
      }
    } else {
      env.getGpus().forEach(g -> ids.add(g.getIndex()));
      ids.sort(Comparator.naturalOrder());
    }
    return ids;
  }

  /** Memory all instances on the pool share: the host's (limit) for CPUs, the GPUs' summed memory. */
  public static long poolMemory(HostEnvironment env, String pool) {
    if (pool.equals(CPU)) {
      return env.getMemoryLimitBytes() != null ? env.getMemoryLimitBytes() : env.getMemoryBytes();
    }
    return env.getGpus().stream().mapToLong(g -> g.getMemoryBytes()).sum();
  }

  /**
   * The time one batch of a timing event takes at the rate its host can keep up: its median, unless
   * the host runs under a CPU quota (a cgroup's CFS quota, {@code cpuQuotaCores}) smaller than its
   * usable cores. Under a quota a short run fits inside the slice each period grants and is timed at
   * full speed, while the throttled rest of the period is lost between runs: a host given a fifth of
   * a core measures the same median as a whole core and does a fifth of its work. There the time is
   * the smaller of the median stretched by the quota's share, {@code p50 / (quota / cores)}, and the
   * time the measured throughput implies, {@code 1000 b / throughput} (never below the median): the
   * first holds when runs fit the slice, the second when every run was throttled (a long run then
   * already carries its pauses, and stretching its median again would count them twice). Without a
   * quota, the median, as before: a neighbour's load slows the mean, not what the host can do.
   */
  public static double batchTimeMs(TimingEvent e, HostEnvironment env) {
    double p50 = e.getP50Ms();
    double share = quotaShare(env);
    if (share >= 1) {
      return p50;
    }
    double stretched = p50 / share;
    double sustained = e.getThroughput() > 0 ? e.getBatch() * 1000.0 / e.getThroughput() : stretched;
    return Math.min(stretched, Math.max(p50, sustained));
  }

  /** The share of its usable cores a host may use under its CPU quota: 1 without a quota. */
  public static double quotaShare(HostEnvironment env) {
    if (env == null || env.getCpuQuotaCores() == null || !(env.getCpuQuotaCores() > 0) || env.getUsableCores() <= 0) {
      return 1;
    }
    return Math.min(1, env.getCpuQuotaCores() / env.getUsableCores());
  }

  /** The profile a grouping uses: one provider and batch size, its measured sizes. */
  public record Profile(String provider, int batch, List<ProfilePoint> points) {}

  /**
   * The profile of one model version on one pool of one host: among its (provider, batch) pairs,
   * those with a size whose batch time is within the model's latency objective first (a larger
   * batch that no size can run within the objective would leave the model unplanned on this host
   * although a smaller one fits); then the one with the most measured sizes, ties to the larger
   * batch, then the provider name. Null when nothing was measured there.
   */
  public static Profile profile(PlanInputs in, String model, String version, String host, String pool) {
    Map<String, List<TimingEvent>> byConfig = new TreeMap<>();
    for (TimingEvent e : timingsOf(in, model, version, host, pool)) {
      byConfig.computeIfAbsent(e.getProvider() + "\u0000" + e.getBatch(), k -> new ArrayList<>()).add(e);
    }
    Double objectiveMs = requirementsOf(in, model).latencyObjectiveMs();
    HostEnvironment env = in.hosts().get(host);
    List<TimingEvent> best = null;
    boolean bestFits = false;
    for (List<TimingEvent> events : byConfig.values()) {
      boolean fits = objectiveMs == null || events.stream().anyMatch(e -> batchTimeMs(e, env) <= objectiveMs);
      if (best == null || (fits && !bestFits) || (fits == bestFits && compareConfig(events, best) > 0)) {
        best = events;
        bestFits = fits;
      }
    }
    if (best == null) {
      return null;
    }
    List<ProfilePoint> points = new ArrayList<>();
    best.stream().sorted(Comparator.comparingInt(TimingEvent::getSize))
        .forEach(e -> points.add(new ProfilePoint(e.getSize(), batchTimeMs(e, in.hosts().get(host)), e.getMemoryBytes())));
    return new Profile(best.get(0).getProvider(), best.get(0).getBatch(), points);
  }

  private static int compareConfig(List<TimingEvent> a, List<TimingEvent> b) {
    int c = Integer.compare(a.size(), b.size());
    if (c != 0) {
      return c;
    }
    c = Integer.compare(a.get(0).getBatch(), b.get(0).getBatch());
    if (c != 0) {
      return c;
    }
    return b.get(0).getProvider().compareTo(a.get(0).getProvider());
  }

  /** Requests per second for a base model: the sum of its service models' Demand (0 when none). */
  public static double demandOf(PlanInputs in, String model) {
    return in.demandOf(model);
  }

  /**
   * The tightest requirements the service models of a base model place on it, and the accuracy
   * objective when any of them asks for it: the version still meets every service model's latency
   * objective (the lowest is applied), so a service model that wanted the fastest gets one in time.
   */
  public static VersionRequirements requirementsOf(PlanInputs in, String model) {
    return in.requirementsOf(model);
  }

  public static HostFacts hostOf(HostEnvironment env) {
    double score = env.getBaseline() != null && env.getBaseline().getThroughput() > 0
        && !Double.isInfinite(env.getBaseline().getThroughput())
        ? env.getBaseline().getThroughput() : NO_BASELINE_SCORE;
    long memory = env.getMemoryLimitBytes() != null ? env.getMemoryLimitBytes() : env.getMemoryBytes();
    return new HostFacts(env.getHostId(), Set.copyOf(env.getExecutionProviders()),
        Set.copyOf(env.getCpuFlags()), memory, score);
  }
}

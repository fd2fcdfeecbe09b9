package io.partita.planner.plan;

import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.PartitionPlan;
import io.partita.avro.TimingEvent;
import io.partita.planning.grouping.ModelShare;
import io.partita.planning.grouping.PoolSharing;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The default plan: where a catalog model goes on a host before anything of it was measured there,
 * so that a fresh deployment serves every model at once instead of answering 503 until the
 * profiler's first timings are planned. Pure.
 *
 * <p>A model is <em>unmeasured</em> on a host when version choice picked no version for the host,
 * or picked one with no timing event on that host (a prediction from another host). {@link
 * PartitionPlans} plans an unmeasured model from another host's timings instead when a similar
 * host measured it on the CPU pool ({@link PredictedProfiles}); the default placement is for the
 * rest. Its default version is the one version choice picked for the host (by prediction from
 * another host), else the catalog version with the highest declared accuracy (none counts lowest),
 * ties to the smaller version id (numbers by value). It goes on the host's CPU pool when that
 * version runs on CPU, else on the GPU pool when it runs on CUDA or TensorRT and the host has GPUs;
 * otherwise it stays unplaced. Its partitions are of one resource each, batch 1, marked
 * {@code defaultPlan = true}: one, or on a pool no measured model wants the pool's resources shared
 * out among the default models, at most {@code planner.default.partitions.max} each ({@link
 * PoolSharing}); once timings arrive the model is measured and the next pass replaces
 * the default by a measured plan, through the workers' make-before-break path.
 */
public final class DefaultPlacements {
  static final Comparator<String> VERSION_ORDER = (a, b) -> {
    boolean na = a.matches("\\d{1,18}");
    boolean nb = b.matches("\\d{1,18}");
    if (na && nb) {
      return Long.compare(Long.parseLong(a), Long.parseLong(b));
    }
    return na ? -1 : nb ? 1 : a.compareTo(b);
  };

  private DefaultPlacements() {}

  /** model -> default version, for every catalog model not measured on the host that has a version to run. */
  public static SortedMap<String, String> unmeasured(PlanInputs in, String host, Map<String, String> chosenOnHost) {
    SortedMap<String, String> out = new TreeMap<>();
    for (Map.Entry<String, List<ModelVersion>> model : Plans.catalogModels(in).entrySet()) {
      String version = chosenOnHost.get(model.getKey());
      if (version != null && measuredOn(in, model.getKey(), version, host)) {
        continue;
      }
      if (version == null) {
        version = defaultVersion(model.getValue());
      }
      if (version != null) {
        out.put(model.getKey(), version);
      }
    }
    return out;
  }

  /** Whether a single-partition timing of this model version on this host exists (any pool). */
  static boolean measuredOn(PlanInputs in, String model, String version, String host) {
    String prefix = Keys.modelVersion(model, version) + Keys.SEP + host + Keys.SEP;
    for (TimingEvent e : in.timings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      if (e.getHost().equals(host)) {
        return true;
      }
    }
    return false;
  }

  static String defaultVersion(List<ModelVersion> versions) {
    List<ModelVersion> sorted = new ArrayList<>(versions);
    sorted.sort(Comparator.comparing((ModelVersion v) -> v.getAccuracy() == null ? Double.NEGATIVE_INFINITY : v.getAccuracy())
        .reversed().thenComparing(ModelVersion::getVersion, VERSION_ORDER));
    return sorted.isEmpty() ? null : sorted.get(0).getVersion();
  }

  /** The pool a default version goes on, or null when the host has none it can run on. */
  public static String pool(PlanInputs in, String model, String version, HostEnvironment env) {
    ModelVersion v = in.versions().get(Keys.modelVersion(model, version));
    List<String> providers = v == null || v.getProviders().isEmpty() ? List.of("CPU") : v.getProviders();
    if (providers.contains("CPU") && !Plans.poolIds(env, Plans.CPU).isEmpty()) {
      return Plans.CPU;
    }
    if ((providers.contains("CUDA") || providers.contains("TENSOR_RT")) && !Plans.poolIds(env, Plans.GPU).isEmpty()) {
      return Plans.GPU;
    }
    return null;
  }

  /** The default partition plan of one model on one pool. */
  public static PartitionPlan plan(String model, String version, String host, String pool, int poolSize,
      ModelShare share, double requestsPerSecond) {
    return PartitionPlan.newBuilder().setModel(model).setVersion(version).setHost(host).setPool(pool)
        .setProvider(pool.equals(Plans.GPU) ? "CUDA" : "CPU").setBatch(1).setPoolSize(poolSize)
        .setShareResources(share.resources()).setShareMemoryBytes(share.memoryBytes()).setRequestsPerSecond(requestsPerSecond)
        .setPlanned(true).setSizes(Collections.nCopies(Math.max(1, share.resources()), 1)).setPredictedThroughput(0).setMeasuredThroughput(null)
        .setMaxLatencyMs(0).setMemoryBytes(0).setUnmetRequestsPerSecond(0).setRunnersUp(List.of())
        .setExcludedSizes(List.of()).setNoEligibleReason(null).setMethod("default")
        .setPlacement("default").setDefaultPlan(true).build();
  }
}

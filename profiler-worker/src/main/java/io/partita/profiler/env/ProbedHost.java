package io.partita.profiler.env;

import java.util.List;

/**
 * What the profiler probed about its host: everything a planner needs to compare it with others:
 * the processor, the cores this process can really use, memory, GPUs, the ONNX Runtime providers
 * that load, software versions and the baseline benchmark. Published as the Avro
 * {@code io.partita.avro.HostEnvironment} ({@code AvroMapper.environment}); the planner reads the
 * part version choice needs as {@code io.partita.planning.version.HostFacts}.
 *
 * @param cpuFlags inference-relevant instruction-set flags ({@link CpuInfo#INFERENCE_FLAGS})
 * @param logicalCores logical CPUs on the machine
 * @param physicalCores physical cores on the machine
 * @param usableCores CPUs this process can keep busy: allowed by affinity and within the cgroup quota
 * @param usableCpuIds the CPU ids partitions are pinned to, {@code usableCores} of them
 * @param cpuQuotaCores the cgroup CPU quota in CPUs, null when there is none
 * @param memoryBytes the machine's memory (MemTotal)
 * @param memoryLimitBytes the cgroup memory limit, null when there is none
 * @param executionProviders providers that loaded a session (CPU always)
 * @param baseline the baseline benchmark, null until it has run
 */
public record ProbedHost(
    String hostId,
    String cpuModel,
    List<String> cpuFlags,
    int logicalCores,
    int physicalCores,
    int usableCores,
    List<Integer> usableCpuIds,
    Double cpuQuotaCores,
    long memoryBytes,
    Long memoryLimitBytes,
    List<Gpu> gpus,
    String onnxRuntimeVersion,
    List<String> executionProviders,
    String osName,
    String osVersion,
    String osArch,
    String javaVersion,
    BaselineScore baseline) {

  public ProbedHost {
    cpuFlags = List.copyOf(cpuFlags);
    usableCpuIds = List.copyOf(usableCpuIds);
    gpus = List.copyOf(gpus);
    executionProviders = List.copyOf(executionProviders);
    if (usableCores != usableCpuIds.size()) {
      throw new IllegalArgumentException("usableCores " + usableCores + " does not match usableCpuIds " + usableCpuIds);
    }
  }

  public ProbedHost withBaseline(BaselineScore score) {
    return new ProbedHost(hostId, cpuModel, cpuFlags, logicalCores, physicalCores, usableCores, usableCpuIds,
        cpuQuotaCores, memoryBytes, memoryLimitBytes, gpus, onnxRuntimeVersion, executionProviders, osName,
        osVersion, osArch, javaVersion, score);
  }

  /** The CFS period the kernel enforces a CPU quota over (the cgroup default, 100 ms). */
  static final long QUOTA_PERIOD_MILLIS = 100;

  /**
   * The wall time to give a point whose budget is {@code budgetMillis} of a whole core. Under a CPU
   * quota below the usable cores, the timed runs get only the quota's share of each 100 ms period
   * and wait out the rest: the budget grows by {@code usableCores / quota} so a point gets the same
   * CPU time as on an unthrottled host, and is at least five periods, so that a point never fits
   * inside one period and misses the throttling that serving meets. (At 0.2 of a core, a 100 ms
   * budget was one period: a heavy model got five samples, under the ten a stable median needs,
   * and the host was never planned from its own timings.)
   */
  public long wallBudgetMillis(long budgetMillis) {
    if (!underQuota()) {
      return budgetMillis;
    }
    long scaled = (long) Math.ceil(budgetMillis * usableCores / cpuQuotaCores);
    return Math.max(scaled, 5 * QUOTA_PERIOD_MILLIS);
  }

  /**
   * The shortest block of the rate rule ({@link io.partita.profiler.stats.StabilityRule#isRateStable})
   * for a point measured here: one default quota period ({@value #QUOTA_PERIOD_MILLIS} ms) under a
   * CPU quota below the usable cores, where the quota splits the runs' times into two modes and the
   * median may never settle; 0 (the median's rule alone) without one. The blocks are a tenth of the
   * timed runs, so at the default budget they span several periods.
   */
  public long rateBlockNanos() {
    if (!underQuota()) {
      return 0;
    }
    return QUOTA_PERIOD_MILLIS * 1_000_000L;
  }

  /** Whether a CPU quota below the usable cores holds this host back. */
  private boolean underQuota() {
    return cpuQuotaCores != null && cpuQuotaCores > 0 && cpuQuotaCores < usableCores;
  }

  /**
   * Whether the host changed in a way that must be republished: everything but the baseline score,
   * which varies a little from run to run.
   */
  public boolean sameHostAs(ProbedHost other) {
    return withBaseline(null).equals(other.withBaseline(null));
  }
}

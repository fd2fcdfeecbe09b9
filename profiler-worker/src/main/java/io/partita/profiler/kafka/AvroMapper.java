package io.partita.profiler.kafka;

import io.partita.avro.BaselineScore;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ProfileRequest;
import io.partita.avro.ProfileStatus;
import io.partita.avro.TimingEvent;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.idle.MeasuringCondition;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The one place where the profiler's records meet the Avro records of {@code schemas/}, and where
 * their record keys are built. Pure: no Kafka, no clock (timestamps are passed in).
 */
public final class AvroMapper {

  /** Status states on {@code <prefix>.profile.status}. */
  public static final String RUNNING = "RUNNING";
  public static final String DONE = "DONE";
  public static final String FAILED = "FAILED";

  /** The host value of a {@link ProfileRequest} meant for every profiler. */
  public static final String EVERY_HOST = "*";

  private AvroMapper() {}

  public static HostEnvironment environment(ProbedHost e, long timestamp) {
    return HostEnvironment.newBuilder()
        .setHostId(e.hostId())
        .setCpuModel(e.cpuModel())
        .setCpuFlags(new ArrayList<>(e.cpuFlags()))
        .setLogicalCores(e.logicalCores())
        .setPhysicalCores(e.physicalCores())
        .setUsableCores(e.usableCores())
        .setUsableCpuIds(new ArrayList<>(e.usableCpuIds()))
        .setCpuQuotaCores(e.cpuQuotaCores())
        .setMemoryBytes(e.memoryBytes())
        .setMemoryLimitBytes(e.memoryLimitBytes())
        .setGpus(e.gpus().stream().map(g -> Gpu.newBuilder().setIndex(g.index()).setName(g.name())
            .setMemoryBytes(g.memoryBytes()).setComputeCapability(g.computeCapability()).build()).toList())
        .setOnnxRuntimeVersion(e.onnxRuntimeVersion())
        .setExecutionProviders(new ArrayList<>(e.executionProviders()))
        .setOsName(e.osName())
        .setOsVersion(e.osVersion())
        .setOsArch(e.osArch())
        .setJavaVersion(e.javaVersion())
        .setBaseline(e.baseline() == null ? null : BaselineScore.newBuilder()
            .setThroughput(e.baseline().throughput())
            .setThreads(e.baseline().threads())
            .setBatch(e.baseline().batch())
            .setPointsMeasured(e.baseline().pointsMeasured())
            .setGridSize(e.baseline().gridSize())
            .setReferenceModel(e.baseline().referenceModel())
            .build())
        .setTimestamp(timestamp)
        .build();
  }

  /** One measured point, its condition not looked at ({@link MeasuringCondition#UNCHECKED}). */
  public static TimingEvent timing(TimingResult r, String requestId, long timestamp) {
    return timing(r, requestId, MeasuringCondition.UNCHECKED, timestamp);
  }

  /**
   * One measured point, and what the host's serving slots were doing when it started. Failed
   * points keep NaN latencies and carry the error.
   */
  public static TimingEvent timing(TimingResult r, String requestId, MeasuringCondition condition, long timestamp) {
    return TimingEvent.newBuilder()
        .setModel(r.model())
        .setVersion(r.version())
        .setHost(r.host())
        .setPool(r.pool())
        .setSize(r.size())
        .setBatch(r.batch())
        .setProvider(r.provider())
        .setGrouping(List.of())
        .setP50Ms(r.p50Ms())
        .setP90Ms(r.p90Ms())
        .setP99Ms(r.p99Ms())
        .setMeanMs(r.meanMs())
        .setSamples(r.samples())
        .setThroughput(r.throughput())
        .setMemoryBytes(r.memoryBytes())
        .setStable(r.stable())
        .setPinned(r.pinned())
        .setOk(r.ok())
        .setError(r.error())
        .setRequestId(requestId)
        .setTimestamp(timestamp)
        .setCondition(condition.name())
        .build();
  }

  /** A whole grouping run at once, its condition not looked at ({@link MeasuringCondition#UNCHECKED}). */
  public static TimingEvent timing(GroupingResult g, String requestId, long timestamp) {
    return timing(g, requestId, MeasuringCondition.UNCHECKED, timestamp);
  }

  /**
   * A whole grouping run at once: {@code size} is the resources of all partitions, {@code grouping}
   * their sizes, {@code throughput} the aggregate. The latency percentiles and mean are those of
   * the slowest partition (the worst a request can meet), samples the sum over partitions, memory
   * the sum, {@code stable} and {@code pinned} true only when true for every partition.
   */
  public static TimingEvent timing(GroupingResult g, String requestId, MeasuringCondition condition, long timestamp) {
    List<TimingResult> parts = g.partitions();
    boolean measured = g.ok() && !parts.isEmpty();
    return TimingEvent.newBuilder()
        .setModel(g.model())
        .setVersion(g.version())
        .setHost(g.host())
        .setPool(g.pool())
        .setSize(g.sizes().stream().mapToInt(Integer::intValue).sum())
        .setBatch(g.batch())
        .setProvider(g.provider())
        .setGrouping(new ArrayList<>(g.sizes()))
        .setP50Ms(measured ? parts.stream().mapToDouble(TimingResult::p50Ms).max().getAsDouble() : Double.NaN)
        .setP90Ms(measured ? parts.stream().mapToDouble(TimingResult::p90Ms).max().getAsDouble() : Double.NaN)
        .setP99Ms(measured ? parts.stream().mapToDouble(TimingResult::p99Ms).max().getAsDouble() : Double.NaN)
        .setMeanMs(measured ? parts.stream().mapToDouble(TimingResult::meanMs).max().getAsDouble() : Double.NaN)
        .setSamples(parts.stream().mapToInt(TimingResult::samples).sum())
        .setThroughput(measured ? g.aggregateThroughput() : 0)
        .setMemoryBytes(g.memoryBytes())
        .setStable(measured && parts.stream().allMatch(TimingResult::stable))
        .setPinned(measured && parts.stream().allMatch(TimingResult::pinned))
        .setOk(g.ok())
        .setError(g.error())
        .setRequestId(requestId)
        .setTimestamp(timestamp)
        .setCondition(condition.name())
        .build();
  }

  /**
   * {@code model/version/host/pool/size/batch}, plus {@code /g<sizes joined by +>} for a grouping
   * ({@code demo-mlp/1/h1/cpu/2/8/g1+1}), so a grouping never overwrites a single point's key.
   */
  public static String timingKey(TimingEvent e) {
    String key = e.getModel() + "/" + e.getVersion() + "/" + e.getHost() + "/" + e.getPool() + "/" + e.getSize()
        + "/" + e.getBatch();
    return e.getGrouping().isEmpty() ? key
        : key + "/g" + e.getGrouping().stream().map(String::valueOf).collect(Collectors.joining("+"));
  }

  public static ProfileStatus status(String requestId, String host, String state, int done, int total, String message,
                                     long timestamp) {
    return ProfileStatus.newBuilder()
        .setRequestId(requestId)
        .setHost(host)
        .setState(state)
        .setDone(done)
        .setTotal(total)
        .setMessage(message)
        .setTimestamp(timestamp)
        .build();
  }

  /** {@code requestId/host}. */
  public static String statusKey(String requestId, String host) {
    return requestId + "/" + host;
  }

  /** Whether a request is meant for this host ({@code host} equal, or {@link #EVERY_HOST}). */
  public static boolean isFor(ProfileRequest r, String hostId) {
    return EVERY_HOST.equals(r.getHost()) || hostId.equals(r.getHost());
  }

  /**
   * The run a request asks for. Empty lists and a zero budget mean the defaults. A request that
   * cannot be run is refused with a message naming the field.
   */
  public static ProfileSpec spec(ProfileRequest r, long defaultBudgetMillis) {
    if (r.getRequestId() == null || r.getRequestId().isBlank()) {
      throw new IllegalArgumentException("requestId: empty; give every request an id");
    }
    if (r.getModel() == null || r.getModel().isBlank()) {
      throw new IllegalArgumentException("model: empty; name a model of the repository");
    }
    checkPositive("sizes", r.getSizes());
    checkPositive("batches", r.getBatches());
    for (int i = 0; i < r.getGroupings().size(); i++) {
      if (r.getGroupings().get(i).isEmpty()) {
        throw new IllegalArgumentException("groupings[" + i + "]: empty; a grouping needs at least one partition size");
      }
      checkPositive("groupings[" + i + "]", r.getGroupings().get(i));
    }
    if (r.getBudgetMs() < 0) {
      throw new IllegalArgumentException("budgetMs: " + r.getBudgetMs() + " is negative; use 0 for the default");
    }
    String version = r.getVersion() == null || r.getVersion().isBlank() ? null : r.getVersion();
    List<Provider> providers = new ArrayList<>();
    for (String name : r.getProviders()) {
      try {
        providers.add(Provider.valueOf(name));
      } catch (IllegalArgumentException unknown) {
        throw new IllegalArgumentException("providers: unknown provider '" + name + "'; known: "
            + Arrays.toString(Provider.values()) + ", or none for every provider that loads");
      }
    }
    return new ProfileSpec(r.getRequestId(), r.getModel(), version, r.getSizes(), r.getBatches(), r.getGroupings(),
        providers, r.getBudgetMs() == 0 ? defaultBudgetMillis : r.getBudgetMs());
  }

  private static void checkPositive(String field, List<Integer> values) {
    for (Integer v : values) {
      if (v == null || v < 1) {
        throw new IllegalArgumentException(field + ": " + values + " holds " + v + "; every value must be at least 1");
      }
    }
  }
}

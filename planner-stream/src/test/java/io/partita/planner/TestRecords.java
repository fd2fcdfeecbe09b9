package io.partita.planner;

import io.partita.avro.BaselineScore;
import io.partita.avro.BatchRuns;
import io.partita.avro.CatalogWeightFile;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.MountStatus;
import io.partita.avro.ServiceModel;
import io.partita.avro.ServingEvidence;
import io.partita.avro.SlotStatus;
import io.partita.avro.TopicPartitions;
import io.partita.avro.TimingEvent;
import java.util.ArrayList;
import java.util.List;

/** Small builders of input records for the planner tests. */
final class TestRecords {
  static final long GIB = 1L << 30;

  private TestRecords() {}

  static ModelVersion version(String model, String version, String... providers) {
    return ModelVersion.newBuilder().setModel(model).setVersion(version).setUri(model + "/" + version + "/model.onnx")
        .setSha256("ab".repeat(32)).setPrecision("fp32").setProviders(List.of(providers)).setAccuracy(null)
        .setMemoryBytes(null).build();
  }

  static ServiceModel serviceModel(String name, String base, int instances) {
    return ServiceModel.newBuilder().setName(name).setBaseModel(base).setWeightFile(null).setInstances(instances)
        .setService(null).setLatencyObjectiveMs(null).setMinAccuracy(null).setMemoryCapBytes(null).build();
  }

  static ServiceModel adapterModel(String name, String base, int instances) {
    return ServiceModel.newBuilder(serviceModel(name, base, instances))
        .setWeightFile(new CatalogWeightFile(base + "/adapters/" + name + ".onnx_adapter", "cd".repeat(32), 344L))
        .build();
  }

  static HostEnvironment host(String id, int cores, int gpus) {
    List<Gpu> list = new ArrayList<>();
    for (int i = 0; i < gpus; i++) {
      list.add(new Gpu(i, "H200", 140 * GIB, "9.0"));
    }
    List<String> providers = gpus > 0 ? List.of("CPU", "CUDA") : List.of("CPU");
    return HostEnvironment.newBuilder().setHostId(id).setCpuModel("test cpu").setCpuFlags(List.of("avx2"))
        .setLogicalCores(cores).setPhysicalCores(cores).setUsableCores(cores).setUsableCpuIds(List.of())
        .setCpuQuotaCores(null).setMemoryBytes(64 * GIB).setMemoryLimitBytes(null).setGpus(list)
        .setOnnxRuntimeVersion("1.23.2").setExecutionProviders(providers).setOsName("Linux").setOsVersion("6")
        .setOsArch("amd64").setJavaVersion("17")
        .setBaseline(new BaselineScore(100.0, 1, 1, 4, 16, "demo-mlp")).setTimestamp(0).build();
  }

  /** A host as {@link #host(String, int, int)} with another baseline score (higher = faster; the others have 100). */
  static HostEnvironment host(String id, int cores, int gpus, double baselineScore) {
    return HostEnvironment.newBuilder(host(id, cores, gpus))
        .setBaseline(new BaselineScore(baselineScore, 1, 1, 4, 16, "demo-mlp")).build();
  }

  static TimingEvent timing(String model, String version, String host, String pool, int size, double p50Ms) {
    return TimingEvent.newBuilder().setModel(model).setVersion(version).setHost(host).setPool(pool).setSize(size)
        .setBatch(1).setProvider(pool.equals("gpu") ? "CUDA" : "CPU").setGrouping(List.of()).setP50Ms(p50Ms)
        .setP90Ms(p50Ms).setP99Ms(p50Ms).setMeanMs(p50Ms).setSamples(100).setThroughput(1000.0 / p50Ms)
        .setMemoryBytes(1 << 20).setStable(true).setPinned(true).setOk(true).setError(null).setRequestId(null)
        .setTimestamp(1000).build();
  }

  /** A copy of {@code status} with the given load and the request-topic partitions its worker owns. */
  static SlotStatus withLoad(SlotStatus status, int inFlight, int queueDepth, TopicPartitions... owned) {
    return SlotStatus.newBuilder(status).setInFlight(inFlight).setQueueDepth(queueDepth)
        .setRequestPartitions(List.of(owned)).build();
  }

  /**
   * A copy of {@code status} at {@code timestamp} that reports a window of {@code windowMs} in which
   * it ran {@code runs} batches of {@code rows} rows taking {@code busyMs} in all.
   */
  static SlotStatus serving(SlotStatus status, long timestamp, long windowMs, int rows, long runs, double busyMs) {
    long busyNanos = Math.round(busyMs * 1e6);
    return SlotStatus.newBuilder(status).setTimestamp(timestamp).setServing(new ServingEvidence(windowMs, rows * runs,
        runs, busyNanos, runs == 0 ? List.of() : List.of(new BatchRuns(rows, runs, busyNanos)), null)).build();
  }

  static SlotStatus ready(String host, String slot, String model, String version, String... instanceIds) {
    List<MountStatus> mounts = new ArrayList<>();
    for (String id : instanceIds) {
      mounts.add(MountStatus.newBuilder().setServiceModel(id.substring(0, id.indexOf('#'))).setInstanceId(id)
          .setWeightFile(null).setSha256(null).setState("READY").setReason(null).setBytes(0).setLastUsed(0).build());
    }
    return SlotStatus.newBuilder().setHost(host).setSlot(slot).setModel(model).setVersion(version).setPool("cpu")
        .setProvider("CPU").setProviderFallback(null).setCpus(List.of()).setGpu(-1).setThreads(1).setPinned(false)
        .setSession("s").setHealth("READY").setMessage(null).setInFlight(0).setQueueDepth(0).setMaxBatch(0)
        .setMemoryBudgetBytes(0).setMountedBytes(0).setServiceModels(mounts).setAnswered(0).setTimestamp(0).build();
  }
}

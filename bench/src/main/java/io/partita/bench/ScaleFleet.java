package io.partita.bench;

import io.partita.avro.BaselineScore;
import io.partita.avro.CatalogWeightFile;
import io.partita.avro.Demand;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A synthetic fleet for the scale benchmark, built from seeded parameters only (the same seed and
 * size give the same records): hosts of four hardware kinds with different CPU speeds, pools and
 * GPUs, base models with one or two versions, service models (weight files) on each, demand on
 * each service model, and the single-size timings the profilers would publish.
 *
 * <p>Kinds (host {@code i} is of kind {@code i % 4}, so a kind is a quarter of the fleet):
 * {@code c8} (8 cores, speed 1.0), {@code c32} (32 cores, 1.6), {@code g1} (16 cores at 1.2 and one
 * GPU at 8x), {@code g4} (32 cores at 1.6 and four GPUs at 20x). Each host's speed differs from its
 * kind's by up to 3 % (the same host measures alike, hosts of a kind do not measure identically).
 * Model {@code j} takes {@code c_j} ms per item on one reference core, log-uniform in 0.5-40 ms;
 * every fifth model has a second, int8 version 1.5x faster on CPU (CPU only, lower accuracy). A
 * host measures every version it can run on its CPU pool at sizes 1, 2 and 4 ({@code T(k) = c / speed
 * / k^0.8}) and, with GPUs, on one GPU. Service models: {@code S} per base model, the first
 * without a weight file, the others with an adapter; base models form services (pipelines) of four.
 */
final class ScaleFleet {
  record Kind(String name, int cores, int gpus, double cpuSpeed, double gpuSpeed, String gpuName) {}

  static final List<Kind> KINDS = List.of(
      new Kind("c8", 8, 0, 1.0, 0, null),
      new Kind("c32", 32, 0, 1.6, 0, null),
      new Kind("g1", 16, 1, 1.2, 8, "A10"),
      new Kind("g4", 32, 4, 1.6, 20, "H100"));
  static final int[] CPU_SIZES = {1, 2, 4};
  static final long T0 = 1_700_000_000_000L;

  final int hosts;
  /** Hosts after {@link #hosts} that never profiled (see the constructor). */
  final int freshHosts;
  final int models;
  final int serviceModelsPerModel;
  final long seed;
  private final double[] hostSpeed;
  private final double[] modelCost;
  private final long[] modelMemory;
  private final String[] hostIds;
  private final String[] modelIds;

  ScaleFleet(int hosts, int models, int serviceModelsPerModel, long seed) {
    this(hosts, 0, models, serviceModelsPerModel, seed);
  }

  /**
   * As above, with {@code freshHosts} more hosts after the others ({@code hosts ..
   * hosts + freshHosts - 1}) that no run loads and that have never profiled: churn brings them in as
   * new hardware. Their speeds are drawn after everything else, so the rest of the fleet is the same
   * as without them.
   */
  ScaleFleet(int hosts, int freshHosts, int models, int serviceModelsPerModel, long seed) {
    this.hosts = hosts;
    this.freshHosts = freshHosts;
    this.models = models;
    this.serviceModelsPerModel = serviceModelsPerModel;
    this.seed = seed;
    SplittableRandom random = new SplittableRandom(seed);
    hostSpeed = new double[hosts + freshHosts];
    hostIds = new String[hosts + freshHosts];
    for (int h = 0; h < hosts; h++) {
      hostSpeed[h] = 1 + 0.03 * (2 * random.nextDouble() - 1);
      hostIds[h] = String.format("h%04d", h);
    }
    modelCost = new double[models];
    modelMemory = new long[models];
    modelIds = new String[models];
    for (int m = 0; m < models; m++) {
      modelCost[m] = Math.exp(Math.log(0.5) + random.nextDouble() * (Math.log(40) - Math.log(0.5)));
      modelMemory[m] = (50L << 20) + (long) (random.nextDouble() * (1L << 30));
      modelIds[m] = String.format("m%03d", m);
    }
    for (int h = hosts; h < hosts + freshHosts; h++) {
      hostSpeed[h] = 1 + 0.03 * (2 * random.nextDouble() - 1);
      hostIds[h] = String.format("h%04d", h);
    }
  }

  static Kind kind(int host) {
    return KINDS.get(host % KINDS.size());
  }

  String host(int h) {
    return hostIds[h];
  }

  String model(int m) {
    return modelIds[m];
  }

  static String serviceModel(String model, int s) {
    return model + "-s" + s;
  }

  List<String> versions(int m) {
    return m % 5 == 0 ? List.of("1", "2") : List.of("1");
  }

  List<ModelVersion> catalogVersions(int m) {
    List<ModelVersion> out = new ArrayList<>();
    for (String v : versions(m)) {
      boolean int8 = v.equals("2");
      out.add(ModelVersion.newBuilder().setModel(model(m)).setVersion(v)
          .setUri(model(m) + "/" + v + "/model.onnx").setSha256(sha(model(m) + v)).setPrecision(int8 ? "int8" : "fp32")
          .setProviders(List.of("CPU")).setAccuracy(int8 ? 0.90 : 0.95).setMemoryBytes(modelMemory[m] / (int8 ? 4 : 1))
          .build());
    }
    return out;
  }

  List<ServiceModel> serviceModels(int m) {
    List<ServiceModel> out = new ArrayList<>();
    for (int s = 0; s < serviceModelsPerModel; s++) {
      String name = serviceModel(model(m), s);
      out.add(ServiceModel.newBuilder().setName(name).setBaseModel(model(m))
          .setWeightFile(s == 0 ? null : new CatalogWeightFile(model(m) + "/adapters/" + name + ".onnx_adapter",
              sha(name), 4L << 20))
          .setInstances(1).setService("svc" + (m / 4)).setLatencyObjectiveMs(null).setMinAccuracy(null)
          .setMemoryCapBytes(null).build());
    }
    return out;
  }

  /** Requests per second of one service model: a model's traffic falls off with its service models' rank. */
  Demand demand(int m, int s) {
    double rate = (1 + (m * 7919L + seed) % 50) / (1.0 + s);
    return Demand.newBuilder().setServiceModel(serviceModel(model(m), s))
        .setRequestsPerSecond(Math.round(rate * 100) / 100.0).setLag(0).setTimestamp(T0).build();
  }

  HostEnvironment environment(int h) {
    Kind k = kind(h);
    List<Integer> cpuIds = new ArrayList<>();
    for (int i = 0; i < k.cores(); i++) {
      cpuIds.add(i);
    }
    List<Gpu> gpus = new ArrayList<>();
    for (int g = 0; g < k.gpus(); g++) {
      gpus.add(new Gpu(g, k.gpuName(), 24L << 30, "8.6"));
    }
    List<String> providers = k.gpus() > 0 ? List.of("CPU", "CUDA") : List.of("CPU");
    return HostEnvironment.newBuilder().setHostId(host(h)).setCpuModel("synthetic " + k.name())
        .setCpuFlags(List.of("avx2", "fma")).setLogicalCores(k.cores()).setPhysicalCores(k.cores())
        .setUsableCores(k.cores()).setUsableCpuIds(cpuIds).setCpuQuotaCores(null).setMemoryBytes((long) k.cores() * (8L << 30))
        .setMemoryLimitBytes(null).setGpus(gpus).setOnnxRuntimeVersion("1.29.0").setExecutionProviders(providers)
        .setOsName("Linux").setOsVersion("6").setOsArch("amd64").setJavaVersion("17")
        .setBaseline(new BaselineScore(10_000 * k.cpuSpeed() * hostSpeed[h], 4, 8, 10, 80, "reference-mlp"))
        .setTimestamp(T0).build();
  }

  /**
   * The single-size timings host {@code h} publishes for model {@code m}, every time multiplied by
   * {@code factor} (1 = as profiled first; a kind's driver update, a jitter).
   */
  List<TimingEvent> timings(int h, int m, double factor, long timestamp) {
    Kind k = kind(h);
    List<TimingEvent> out = new ArrayList<>();
    for (String v : versions(m)) {
      double cost = modelCost[m] / (v.equals("2") ? 1.5 : 1) * factor;
      for (int size : CPU_SIZES) {
        out.add(event(h, m, v, "cpu", size, "CPU", cost / (k.cpuSpeed() * hostSpeed[h]) / Math.pow(size, 0.8), timestamp));
      }
      if (k.gpus() > 0 && v.equals("1")) {
        out.add(event(h, m, v, "gpu", 1, "CUDA", cost / (k.gpuSpeed() * hostSpeed[h]), timestamp));
      }
    }
    return out;
  }

  private TimingEvent event(int h, int m, String version, String pool, int size, String provider, double p50,
      long timestamp) {
    double rounded = Math.round(p50 * 10_000) / 10_000.0; // the profiler's figures are not exact to the last bit either
    return TimingEvent.newBuilder().setModel(model(m)).setVersion(version).setHost(host(h)).setPool(pool)
        .setSize(size).setBatch(1).setProvider(provider).setGrouping(List.of()).setP50Ms(rounded)
        .setP90Ms(rounded * 1.1).setP99Ms(rounded * 1.3).setMeanMs(rounded * 1.02).setSamples(200)
        .setThroughput(1000.0 / rounded).setMemoryBytes(modelMemory[m]).setStable(true).setPinned(true).setOk(true)
        .setError(null).setRequestId(null).setTimestamp(timestamp).setCondition("IDLE").build();
  }

  private static String sha(String seed) {
    String hex = Integer.toHexString(seed.hashCode());
    return (hex + "0".repeat(64)).substring(0, 64);
  }
}

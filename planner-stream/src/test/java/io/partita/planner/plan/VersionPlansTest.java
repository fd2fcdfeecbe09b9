package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.BaselineScore;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.planning.version.VersionPlan;
import io.partita.planning.version.VersionProblem;
import io.partita.planning.version.VersionSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A pass gives version choice the reduced problem of a host ({@link VersionPlans#reducedProblem}):
 * only the host's own observations when it measured every version, and when it predicts, those
 * plus, per version it did not measure, the observations of the first host in similarity order
 * that measured it; both must choose exactly as the full problem with every host's observations
 * and every other host. A change on one host re-plans only that host and the hosts that predict
 * ({@link VersionPlans#predictingHosts}), which must be every host whose choice the change can
 * move.
 */
class VersionPlansTest {
  private static final String[] HOSTS = {"h0", "h1", "h2", "h3", "h4"};
  private static final String[] WIDE_HOSTS = {"h00", "h01", "h02", "h03", "h04", "h05", "h06", "h07", "h08", "h09",
      "h10", "h11"};
  private static final String[] WIDE_MODELS = {"a", "b"};
  private static final String[] WIDE_VERSIONS = {"1", "2", "3"};
  private static final double[] WIDE_SCORES = {25, 50, 100, 200};
  private static final List<List<String>> WIDE_PROVIDERS = List.of(List.of("CPU"), List.of("CPU"),
      List.of("CPU", "CUDA"), List.of("CPU", "CUDA", "TENSOR_RT"), List.of("CPU", "DNNL", "CUDA"));
  private static final double[] HYSTERESIS = {0, 0.1, 0.5};
  private static final List<List<String>> WIDE_FLAGS = List.of(List.of("avx2"), List.of("avx2", "fma"),
      List.of("avx2", "fma", "avx512f"), List.of("sse4"));

  @Test
  void shouldChooseFromTheReducedProblemAsFromTheFullOne() {
    Random random = new Random(3);
    for (int problem = 0; problem < 400; problem++) {
      PlanInputs in = inputs(random);
      for (String model : in.catalogModels().keySet()) {
        VersionPlans.Evidence evidence = VersionPlans.evidence(in, model);
        for (String host : in.hosts().keySet()) {
          VersionPlan full = VersionSelector.choose(VersionPlans.versionProblem(in, model, host));
          VersionPlan reduced = VersionSelector.choose(VersionPlans.reducedProblem(in, model, host, evidence));
          assertThat(reduced).as("problem %d, %s on %s", problem, model, host).isEqualTo(full);
        }
      }
    }
  }

  @Test
  void shouldLeaveEveryHostThatDoesNotPredictUnmovedByAnotherHostsTimings() {
    Random random = new Random(5);
    for (int problem = 0; problem < 300; problem++) {
      PlanInputs in = inputs(random);
      // Another host's timings change (or appear): only hosts that predict may choose otherwise.
      SortedMap<String, TimingEvent> timings = new TreeMap<>(in.timings());
      String changed = HOSTS[random.nextInt(HOSTS.length)];
      String version = random.nextBoolean() ? "1" : "2";
      TimingEvent e = timing("m", version, changed, 1 + random.nextInt(3), 1 + random.nextInt(60));
      timings.put(Keys.timing(e), e);
      PlanInputs after = new PlanInputs(in.versions(), in.serviceModels(), in.hosts(), in.slots(), in.demand(), timings,
          in.groupings());
      Set<String> predicting = VersionPlans.predictingHosts(in, "m");
      for (String host : in.hosts().keySet()) {
        if (host.equals(changed) || predicting.contains(host)) {
          continue;
        }
        assertThat(VersionPlans.versionChoice(after, "m", host)).as("problem %d, %s", problem, host)
            .isEqualTo(VersionPlans.versionChoice(in, "m", host));
      }
    }
  }

  /**
   * The bounded problem of a predicting host (its own observations, and for each version it did not
   * measure those of the first host in similarity order that measured it) chooses as the full one,
   * with the running version and hysteresis of a pass: the whole choice record, so the chosen
   * version, every candidate's latency, whether it was predicted and its source host. Worlds of up
   * to 12 hosts (similarity ties in providers, flags and scores; four sets of providers, so the
   * most similar host that measured a version may not load it; no baseline score; memory too
   * small) change between passes (timings, hosts joining, leaving with their timings kept,
   * re-publishing), and one evidence per model serves every host of a pass, as in the planner.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6})
  void shouldChooseForAPredictingHostFromTheFirstSimilarHostsAsFromEveryHost(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int predicted = 0;
    int fewMeasuring = 0;
    int manyMeasuring = 0;
    for (int world = 0; world < 30; world++) {
      InputTables tables = new InputTables();
      int models = 1 + random.nextInt(WIDE_MODELS.length);
      for (int m = 0; m < models; m++) {
        putModel(tables, WIDE_MODELS[m], random);
      }
      int hosts = 2 + random.nextInt(WIDE_HOSTS.length - 1);
      for (int h = 0; h < hosts; h++) {
        putWideHost(tables, WIDE_HOSTS[h], random);
        for (int t = random.nextInt(3) == 0 ? 1 + random.nextInt(8) : random.nextInt(2); t > 0; t--) {
          putWideTiming(tables, WIDE_HOSTS[h], models, random);
        }
      }
      for (int pass = 0; pass < 10; pass++) {
        PlanInputs in = tables.view();
        for (String model : in.catalogModels().keySet()) {
          VersionPlans.Evidence evidence = VersionPlans.evidence(in, model);
          Set<String> predicting = VersionPlans.predictingHosts(in, model);
          for (String host : in.hosts().keySet()) {
            String running = random.nextInt(3) == 0 ? null : WIDE_VERSIONS[random.nextInt(WIDE_VERSIONS.length)];
            double hysteresis = HYSTERESIS[random.nextInt(HYSTERESIS.length)];
            VersionChoice bounded = VersionPlans.versionChoice(in, model, host, running, hysteresis, evidence);
            VersionChoice full = VersionPlans.versionChoice(in, model, host, running, hysteresis);
            assertThat(bounded).as("seed %d world %d pass %d: %s on %s (running %s, hysteresis %s)", seed, world, pass,
                model, host, running, hysteresis).isEqualTo(full);
            VersionProblem problem = VersionPlans.reducedProblem(in, model, host, evidence);
            assertThat(problem.otherHosts().size()).as("at most one source per version")
                .isLessThanOrEqualTo(in.catalogModels().get(model).size());
            if (predicting.contains(host) && full.getCandidates().stream().anyMatch(VersionCandidate::getPredicted)) {
              predicted++;
              int measuring = in.hostsMeasuring(model).size();
              if ((long) measuring * measuring < in.hosts().size() - 1) {
                fewMeasuring++;
              } else {
                manyMeasuring++;
              }
            }
          }
        }
        changeWide(tables, hosts, models, random);
      }
    }
    assertThat(predicted).as("choices with a predicted candidate compared").isGreaterThan(200);
    assertThat(fewMeasuring).as("sources found among the few hosts that measured the model").isPositive();
    assertThat(manyMeasuring).as("sources found by walking the whole order").isPositive();
  }

  /** Versions 1 (CPU), 2 (CPU, or CUDA only) and 3 (CPU, or too large for the hosts), random accuracy; requirements. */
  /**
   * The hosts that predict a model (planned, lacking timings of some catalog version) are kept by
   * the input tables as records come and go; they must always be those a walk over every host finds:
   * timings added and removed, hosts joining, leaving and re-publishing, a worker leaving and coming
   * back (liveness), catalog versions added and removed.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3})
  void shouldKeepThePredictingHostsAsAWalkOverEveryHostFindsThem(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    InputTables tables = new InputTables();
    for (int step = 0; step < 3000; step++) {
      int hosts = WIDE_HOSTS.length;
      switch (random.nextInt(10)) {
        case 0 -> putModel(tables, WIDE_MODELS[random.nextInt(WIDE_MODELS.length)], random);
        case 1 -> tables.put(InputTables.Table.VERSIONS, Keys.modelVersion(WIDE_MODELS[random.nextInt(WIDE_MODELS.length)],
            WIDE_VERSIONS[random.nextInt(WIDE_VERSIONS.length)]), null);
        case 2 -> {
          String host = WIDE_HOSTS[random.nextInt(hosts)];
          tables.put(InputTables.Table.LIVENESS, host,
              new HostLiveness(host, random.nextBoolean() ? HostStates.LEFT : HostStates.PRESENT, null, 0L));
        }
        default -> changeWide(tables, hosts, WIDE_MODELS.length, random);
      }
      PlanInputs in = tables.view();
      for (String model : WIDE_MODELS) {
        Set<String> walked = new TreeSet<>();
        List<ModelVersion> versions = in.catalogModels().get(model);
        for (String host : in.hosts().keySet()) {
          if (versions != null && !in.measuredVersions(model, host).containsAll(
              versions.stream().map(ModelVersion::getVersion).toList())) {
            walked.add(host);
          }
        }
        assertThat(VersionPlans.predictingHosts(in, model)).as("seed %d step %d, model %s", seed, step, model)
            .isEqualTo(walked);
      }
    }
  }

  private static void putModel(InputTables tables, String model, SplittableRandom random) {
    for (String v : WIDE_VERSIONS) {
      String provider = v.equals("2") && random.nextInt(3) == 0 ? "CUDA" : "CPU";
      Long memory = v.equals("3") && random.nextInt(4) == 0 ? 100L << 30 : null;
      tables.put(InputTables.Table.VERSIONS, Keys.modelVersion(model, v), ModelVersion.newBuilder().setModel(model)
          .setVersion(v).setUri(model + "/" + v + "/model.onnx").setSha256("ab".repeat(32)).setPrecision("fp32")
          .setProviders(List.of(provider)).setAccuracy(random.nextBoolean() ? null : 0.7 + random.nextInt(3) / 10.0)
          .setMemoryBytes(memory).build());
    }
    tables.put(InputTables.Table.SERVICE_MODELS, model, ServiceModel.newBuilder().setName(model).setBaseModel(model)
        .setWeightFile(null).setInstances(1).setService(null)
        .setLatencyObjectiveMs(random.nextInt(3) == 0 ? 30.0 : null)
        .setMinAccuracy(random.nextInt(4) == 0 ? 0.8 : null).setMemoryCapBytes(null).build());
  }

  private static void putWideHost(InputTables tables, String id, SplittableRandom random) {
    // Three sets with CUDA, so a host of one set finds hosts of the others, with or without CUDA,
    // in the same similarity tier: the first of them in order may not load what a version needs.
    List<String> providers = WIDE_PROVIDERS.get(random.nextInt(WIDE_PROVIDERS.size()));
    boolean gpu = providers.contains("CUDA");
    HostEnvironment env = HostEnvironment.newBuilder().setHostId(id).setCpuModel("cpu")
        .setCpuFlags(WIDE_FLAGS.get(random.nextInt(WIDE_FLAGS.size()))).setLogicalCores(4).setPhysicalCores(4)
        .setUsableCores(4).setUsableCpuIds(List.of()).setCpuQuotaCores(random.nextInt(6) == 0 ? 1.0 : null)
        .setMemoryBytes(64L << 30).setMemoryLimitBytes(null)
        .setGpus(gpu ? List.of(new Gpu(0, "A10", 24L << 30, "8.6")) : new ArrayList<>())
        .setOnnxRuntimeVersion("1.29.0").setExecutionProviders(providers)
        .setOsName("Linux").setOsVersion("6").setOsArch("amd64").setJavaVersion("17")
        .setBaseline(random.nextInt(5) == 0 ? null
            : new BaselineScore(WIDE_SCORES[random.nextInt(WIDE_SCORES.length)], 1, 1, 4, 16, "ref"))
        .setTimestamp(0).build();
    tables.put(InputTables.Table.HOSTS, id, env);
  }

  private static void putWideTiming(InputTables tables, String host, int models, SplittableRandom random) {
    TimingEvent e = timing(WIDE_MODELS[random.nextInt(models)], WIDE_VERSIONS[random.nextInt(WIDE_VERSIONS.length)],
        host, 1 + random.nextInt(3), 1 + random.nextInt(60));
    e.setBatch(random.nextInt(4) == 0 ? 2 : 1);
    tables.put(InputTables.Table.TIMINGS, Keys.timing(e), e);
  }

  /** One change between passes: a timing added or removed, a host joining, leaving (its timings kept) or re-publishing. */
  private static void changeWide(InputTables tables, int hosts, int models, SplittableRandom random) {
    String host = WIDE_HOSTS[random.nextInt(hosts)];
    switch (random.nextInt(6)) {
      case 0, 1 -> putWideTiming(tables, host, models, random);
      case 2 -> {
        List<String> keys = new ArrayList<>(tables.view().timings().keySet());
        if (!keys.isEmpty()) {
          tables.put(InputTables.Table.TIMINGS, keys.get(random.nextInt(keys.size())), null);
        }
      }
      case 3 -> tables.put(InputTables.Table.HOSTS, host, null);
      default -> putWideHost(tables, host, random);
    }
  }

  /** Model m with versions 1 and 2 (one maybe CUDA only) on up to five hosts measuring some of them. */
  private static PlanInputs inputs(Random random) {
    SortedMap<String, ModelVersion> versions = new TreeMap<>();
    versions.put("m/1", version("1", "CPU", random));
    versions.put("m/2", version("2", random.nextInt(3) == 0 ? "CUDA" : "CPU", random));
    SortedMap<String, HostEnvironment> hosts = new TreeMap<>();
    SortedMap<String, TimingEvent> timings = new TreeMap<>();
    for (String h : HOSTS) {
      if (random.nextInt(5) == 0) {
        continue;
      }
      hosts.put(h, host(h, random));
      for (String v : List.of("1", "2")) {
        if (random.nextInt(3) > 0) {
          for (int size = 1; size <= 2; size++) {
            if (random.nextBoolean()) {
              TimingEvent e = timing("m", v, h, size, 1 + random.nextInt(60));
              e.setBatch(random.nextInt(4) == 0 ? 2 : 1);
              timings.put(Keys.timing(e), e);
            }
          }
        }
      }
    }
    SortedMap<String, ServiceModel> services = new TreeMap<>();
    services.put("m", ServiceModel.newBuilder().setName("m").setBaseModel("m").setWeightFile(null).setInstances(1)
        .setService(null).setLatencyObjectiveMs(random.nextInt(3) == 0 ? 30.0 : null)
        .setMinAccuracy(random.nextInt(3) == 0 ? 0.8 : null).setMemoryCapBytes(null).build());
    return new PlanInputs(versions, services, hosts, new TreeMap<>(), new TreeMap<>(), timings, new TreeMap<>());
  }

  private static ModelVersion version(String v, String provider, Random random) {
    return ModelVersion.newBuilder().setModel("m").setVersion(v).setUri("m/" + v + "/model.onnx")
        .setSha256("ab".repeat(32)).setPrecision("fp32").setProviders(List.of(provider))
        .setAccuracy(random.nextBoolean() ? null : 0.7 + random.nextInt(3) / 10.0)
        .setMemoryBytes(random.nextInt(5) == 0 ? 100L << 30 : null).build();
  }

  private static HostEnvironment host(String id, Random random) {
    boolean gpu = random.nextBoolean();
    return HostEnvironment.newBuilder().setHostId(id).setCpuModel("cpu").setCpuFlags(random.nextBoolean()
            ? List.of("avx2") : List.of("avx2", "avx512f"))
        .setLogicalCores(4).setPhysicalCores(4).setUsableCores(4).setUsableCpuIds(List.of()).setCpuQuotaCores(null)
        .setMemoryBytes(64L << 30).setMemoryLimitBytes(null)
        .setGpus(gpu ? List.of(new Gpu(0, "A10", 24L << 30, "8.6")) : new ArrayList<>())
        .setOnnxRuntimeVersion("1.29.0").setExecutionProviders(gpu ? List.of("CPU", "CUDA") : List.of("CPU"))
        .setOsName("Linux").setOsVersion("6").setOsArch("amd64").setJavaVersion("17")
        .setBaseline(new BaselineScore(50.0 + random.nextInt(100), 1, 1, 4, 16, "ref")).setTimestamp(0).build();
  }

  private static TimingEvent timing(String model, String version, String host, int size, double p50) {
    return TimingEvent.newBuilder().setModel(model).setVersion(version).setHost(host).setPool("cpu").setSize(size)
        .setBatch(1).setProvider("CPU").setGrouping(List.of()).setP50Ms(p50).setP90Ms(p50).setP99Ms(p50).setMeanMs(p50)
        .setSamples(100).setThroughput(1000.0 / p50).setMemoryBytes(1 << 20).setStable(true).setPinned(true).setOk(true)
        .setError(null).setRequestId(null).setTimestamp(1).build();
  }
}

package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.BaselineScore;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.planner.plan.Plans.Profile;
import io.partita.planner.plan.PredictedProfiles.HostProfile;
import io.partita.planning.version.HostFacts;
import io.partita.planning.version.ProfilePrediction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The profile of a host without timings of its own, found by walking the other hosts in similarity
 * order to the first usable one ({@link PredictedProfiles#of}), equals the prediction from every
 * other host's profile ({@link #exact}, the method as it was before it was bounded), on random
 * small worlds that change between passes: hosts with and without baseline scores, providers and
 * flags that tie, profiles missing, profiles of a provider the host does not load, times that do
 * not survive scaling, hosts gone with their timings kept. The predictions a pass keeps are dropped
 * when the inputs change.
 */
class PredictedProfilesTest {
  private static final String[] HOSTS = {"h00", "h01", "h02", "h03", "h04", "h05", "h06", "h07", "h08", "h09", "h10",
      "h11"};
  private static final String[] MODELS = {"a", "b"};
  private static final String[] VERSIONS = {"1", "2"};
  private static final double[] SCORES = {25, 50, 100, 200};
  private static final List<List<String>> FLAGS = List.of(List.of("avx2"), List.of("avx2", "fma"),
      List.of("avx2", "fma", "avx512f"), List.of("sse4"));

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void shouldPredictAsFromEveryOtherHostAcrossChangingInputs(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    int predicted = 0;
    int fewMeasured = 0;
    int manyMeasured = 0;
    for (int world = 0; world < 40; world++) {
      InputTables tables = new InputTables();
      for (String m : MODELS) {
        for (String v : VERSIONS) {
          tables.put(InputTables.Table.VERSIONS, Keys.modelVersion(m, v), version(m, v));
        }
        tables.put(InputTables.Table.SERVICE_MODELS, m, service(m, random.nextInt(3) == 0 ? 20.0 : null));
      }
      int hosts = 2 + random.nextInt(HOSTS.length - 1);
      for (int h = 0; h < hosts; h++) {
        putHost(tables, HOSTS[h], random);
        // Most hosts measured nothing yet: a model measured by few hosts is searched among those.
        for (int t = random.nextInt(3) == 0 ? 1 + random.nextInt(4) : 0; t > 0; t--) {
          putTiming(tables, HOSTS[h], random);
        }
      }
      for (int pass = 0; pass < 12; pass++) {
        PlanInputs in = tables.view();
        for (String host : in.hosts().keySet()) {
          for (String m : MODELS) {
            int candidates = (int) in.hosts().entrySet().stream()
                .filter(e -> !e.getKey().equals(host) && PredictedProfiles.hasBaseline(e.getValue())).count();
            int measuring = in.hostsMeasuring(m).size();
            for (String v : VERSIONS) {
              for (String pool : Plans.POOLS) {
                HostProfile expected = exact(in, m, v, host, pool);
                HostProfile got = PredictedProfiles.of(in, m, v, host, pool);
                assertThat(got).as("seed %d world %d pass %d: %s/%s on %s/%s", seed, world, pass, m, v, host, pool)
                    .isEqualTo(expected);
                assertThat(PredictedProfiles.of(in, m, v, host, pool)).as("asked again in the same pass").isEqualTo(got);
                if (expected != null && !expected.own()) {
                  predicted++;
                  if ((long) measuring * measuring < candidates) {
                    fewMeasured++;
                  } else {
                    manyMeasured++;
                  }
                }
              }
            }
          }
        }
        change(tables, hosts, random);
      }
    }
    assertThat(predicted).as("predictions compared").isGreaterThan(100);
    assertThat(fewMeasured).as("predictions found among the few hosts that measured the model").isPositive();
    assertThat(manyMeasured).as("predictions found by walking the whole order").isPositive();
  }

  @Test
  void shouldKeepAPredictionForThePassAndDropItWhenTheInputsChange() {
    InputTables tables = new InputTables();
    tables.put(InputTables.Table.VERSIONS, "a/1", version("a", "1"));
    tables.put(InputTables.Table.SERVICE_MODELS, "a", service("a", null));
    tables.put(InputTables.Table.HOSTS, "new", host("new", List.of("CPU"), List.of("avx2"), 50.0));
    tables.put(InputTables.Table.HOSTS, "far", host("far", List.of("CPU"), List.of("sse4"), 50.0));
    TimingEvent far = timing("a", "1", "far", "cpu", "CPU", 1, 1, 10.0);
    tables.put(InputTables.Table.TIMINGS, Keys.timing(far), far);

    HostProfile first = PredictedProfiles.of(tables.view(), "a", "1", "new", "cpu");
    assertThat(first.predicted().source().hostId()).isEqualTo("far");
    assertThat(PredictedProfiles.of(tables.view(), "a", "1", "new", "cpu")).as("the pass's own").isSameAs(first);

    // A more similar host joins, then measures: the next pass predicts from it.
    tables.put(InputTables.Table.HOSTS, "twin", host("twin", List.of("CPU"), List.of("avx2"), 100.0));
    assertThat(PredictedProfiles.of(tables.view(), "a", "1", "new", "cpu").predicted().source().hostId()).isEqualTo("far");
    TimingEvent twin = timing("a", "1", "twin", "cpu", "CPU", 1, 1, 4.0);
    tables.put(InputTables.Table.TIMINGS, Keys.timing(twin), twin);
    HostProfile after = PredictedProfiles.of(tables.view(), "a", "1", "new", "cpu");
    assertThat(after.predicted().source().hostId()).isEqualTo("twin");
    assertThat(after.profile().points().get(0).latencyMs()).isEqualTo(8.0);
    assertThat(after).isEqualTo(exact(tables.view(), "a", "1", "new", "cpu"));
  }

  /** The prediction from every other host's profile: {@link PredictedProfiles#of} as it was before it was bounded. */
  static HostProfile exact(PlanInputs in, String model, String version, String host, String pool) {
    Profile own = Plans.profile(in, model, version, host, pool);
    if (own != null) {
      return new HostProfile(own, null);
    }
    HostEnvironment env = in.hosts().get(host);
    if (!pool.equals(Plans.CPU) || env == null || !PredictedProfiles.hasBaseline(env)
        || DefaultPlacements.measuredOn(in, model, version, host)) {
      return null;
    }
    HostFacts target = Plans.hostOf(env);
    List<ProfilePrediction.Source> sources = new ArrayList<>();
    for (Map.Entry<String, HostEnvironment> other : in.hosts().entrySet()) {
      if (other.getKey().equals(host) || !PredictedProfiles.hasBaseline(other.getValue())) {
        continue;
      }
      Profile there = Plans.profile(in, model, version, other.getKey(), pool);
      if (there != null) {
        sources.add(new ProfilePrediction.Source(Plans.hostOf(other.getValue()), there.provider(), there.batch(),
            there.points()));
      }
    }
    return ProfilePrediction.predict(target, sources)
        .map(p -> new HostProfile(new Profile(p.provider(), p.batch(), p.points()), p))
        .orElse(null);
  }

  /** One change between passes: a timing, a host joining, leaving (its timings kept) or re-publishing its environment. */
  private static void change(InputTables tables, int hosts, SplittableRandom random) {
    String host = HOSTS[random.nextInt(hosts)];
    switch (random.nextInt(5)) {
      case 0, 1 -> putTiming(tables, host, random);
      case 2 -> tables.put(InputTables.Table.HOSTS, host, null);
      default -> putHost(tables, host, random);
    }
  }

  private static void putHost(InputTables tables, String id, SplittableRandom random) {
    List<String> providers = random.nextInt(3) == 0 ? List.of("CPU", "CUDA") : List.of("CPU");
    Double score = random.nextInt(5) == 0 ? null : SCORES[random.nextInt(SCORES.length)];
    HostEnvironment env = host(id, providers, FLAGS.get(random.nextInt(FLAGS.size())), score);
    if (random.nextInt(6) == 0) {
      env.setCpuQuotaCores(1.0); // a quarter of its cores: times stretched (Plans.batchTimeMs)
    }
    tables.put(InputTables.Table.HOSTS, id, env);
  }

  private static void putTiming(InputTables tables, String host, SplittableRandom random) {
    String pool = random.nextInt(5) == 0 ? "gpu" : "cpu";
    int p = random.nextInt(10);
    String provider = pool.equals("gpu") ? "CUDA" : p == 0 ? "CUDA" : p == 1 ? "DNNL" : "CPU";
    // A time that scaling makes infinite drops its point; a profile of such points alone predicts nothing.
    double p50 = random.nextInt(12) == 0 ? Double.MAX_VALUE / 2 : 1 + random.nextInt(40);
    TimingEvent e = timing(MODELS[random.nextInt(MODELS.length)], VERSIONS[random.nextInt(VERSIONS.length)], host, pool,
        provider, 1 + random.nextInt(3), random.nextInt(4) == 0 ? 2 : 1, p50);
    tables.put(InputTables.Table.TIMINGS, Keys.timing(e), e);
  }

  private static ModelVersion version(String model, String v) {
    return ModelVersion.newBuilder().setModel(model).setVersion(v).setUri(model + "/" + v + "/model.onnx")
        .setSha256("ab".repeat(32)).setPrecision("fp32").setProviders(List.of("CPU")).setAccuracy(null)
        .setMemoryBytes(null).build();
  }

  private static ServiceModel service(String model, Double latencyObjectiveMs) {
    return ServiceModel.newBuilder().setName(model).setBaseModel(model).setWeightFile(null).setInstances(1)
        .setService(null).setLatencyObjectiveMs(latencyObjectiveMs).setMinAccuracy(null).setMemoryCapBytes(null)
        .build();
  }

  private static HostEnvironment host(String id, List<String> providers, List<String> flags, Double score) {
    return HostEnvironment.newBuilder().setHostId(id).setCpuModel("cpu").setCpuFlags(flags).setLogicalCores(4)
        .setPhysicalCores(4).setUsableCores(4).setUsableCpuIds(List.of()).setCpuQuotaCores(null)
        .setMemoryBytes(64L << 30).setMemoryLimitBytes(null).setGpus(new ArrayList<>()).setOnnxRuntimeVersion("1.29.0")
        .setExecutionProviders(providers).setOsName("Linux").setOsVersion("6").setOsArch("amd64").setJavaVersion("17")
        .setBaseline(score == null ? null : new BaselineScore(score, 1, 1, 4, 16, "ref")).setTimestamp(0).build();
  }

  private static TimingEvent timing(String model, String version, String host, String pool, String provider, int size,
      int batch, double p50) {
    return TimingEvent.newBuilder().setModel(model).setVersion(version).setHost(host).setPool(pool).setSize(size)
        .setBatch(batch).setProvider(provider).setGrouping(List.of()).setP50Ms(p50).setP90Ms(p50).setP99Ms(p50)
        .setMeanMs(p50).setSamples(100).setThroughput(1000.0 / p50).setMemoryBytes(1 << 20).setStable(true)
        .setPinned(true).setOk(true).setError(null).setRequestId(null).setTimestamp(1).build();
  }
}

package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.BaselineScore;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.TimingEvent;
import io.partita.common.Topics;
import io.partita.planning.mapping.ResourceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The planner keeps the mapping's matrix between passes and recomputes what changed: it must
 * always equal the matrix built from nothing on the same inputs, whether resources are single
 * pools or classes of alike pools, as hosts join, leave and change hardware, timings change and
 * chosen versions change.
 */
class MappingMatrixTest {
  private static final String[] HOSTS = {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"};
  private static final String[] MODELS = {"a", "b", "c"};

  @Test
  void shouldEqualTheMatrixBuiltFromNothingAfterEveryChange() {
    for (int limit : new int[] {3, 64}) {
      for (long seed = 1; seed <= 40; seed++) {
        Random random = new Random(seed);
        PlanSettings settings = PlanSettings.defaults(new Topics("t")).withMappingPoolLimit(limit);
        SortedMap<String, ModelVersion> versions = new TreeMap<>();
        for (String m : MODELS) {
          versions.put(m + "/1", version(m, "1"));
          versions.put(m + "/2", version(m, "2"));
        }
        SortedMap<String, HostEnvironment> hosts = new TreeMap<>();
        SortedMap<String, TimingEvent> timings = new TreeMap<>();
        Map<String, String> chosen = new TreeMap<>();
        MappingMatrix matrix = new MappingMatrix();
        for (int step = 0; step < 40; step++) {
          Map<String, Set<String>> changedHosts = new TreeMap<>();
          Set<String> changedModels = new TreeSet<>();
          for (int c = 0; c < 1 + random.nextInt(3); c++) {
            String h = HOSTS[random.nextInt(HOSTS.length)];
            String m = MODELS[random.nextInt(MODELS.length)];
            switch (random.nextInt(6)) {
              case 0 -> { // a host joins, leaves or changes hardware
                if (random.nextInt(3) == 0) {
                  hosts.remove(h);
                } else {
                  hosts.put(h, host(h, random));
                }
              }
              case 1, 2 -> { // a timing of a version on a pool
                String v = random.nextBoolean() ? "1" : "2";
                String pool = random.nextInt(3) == 0 ? "gpu" : "cpu";
                TimingEvent e = timing(m, v, h, pool, 1 + random.nextInt(2), 1 + random.nextInt(40));
                timings.put(Keys.timing(e), e);
                changedHosts.computeIfAbsent(m, k -> new TreeSet<>()).add(h);
              }
              case 3, 4 -> { // the version chosen for a model on a host
                int pick = random.nextInt(3);
                if (pick == 0) {
                  chosen.remove(Keys.modelHost(m, h));
                } else {
                  chosen.put(Keys.modelHost(m, h), String.valueOf(pick));
                }
                changedHosts.computeIfAbsent(m, k -> new TreeSet<>()).add(h);
              }
              default -> { // a model's catalog versions
                if (random.nextBoolean()) {
                  versions.remove(m + "/1");
                  versions.remove(m + "/2");
                } else {
                  versions.put(m + "/1", version(m, "1"));
                }
                changedModels.add(m);
              }
            }
          }
          PlanInputs in = new PlanInputs(versions, new TreeMap<>(), hosts, new TreeMap<>(), new TreeMap<>(), timings,
              new TreeMap<>());
          MappingPlans.ChosenVersions lookUp = (model, host) -> chosen.get(Keys.modelHost(model, host));
          MappingPlans.Matrix kept = matrix.update(in, settings, lookUp, changedHosts, changedModels);
          MappingPlans.Matrix whole = MappingMatrix.full(in, settings, lookUp);
          String when = "limit " + limit + ", seed " + seed + ", step " + step;
          if (whole == null) {
            assertThat(kept).as(when).isNull();
            continue;
          }
          assertThat(kept.resources()).extracting(ResourceSpec::id).as(when)
              .isEqualTo(whole.resources().stream().map(ResourceSpec::id).toList());
          assertThat(kept.resources()).as(when).isEqualTo(whole.resources());
          assertThat(kept.latency()).as(when).isEqualTo(whole.latency());
          assertThat(kept.hostOf()).as(when).isEqualTo(whole.hostOf());
        }
      }
    }
  }

  /**
   * Hosts with ever new names: each step one of eight hosts leaves and a host never seen joins,
   * with its timings. The matrix keeps a column per pool it has seen and starts afresh once they
   * are twice the pools of the fleet; before, at and after that it equals the matrix built whole.
   */
  @Test
  void shouldEqualTheMatrixBuiltFromNothingWhileHostsWithNewNamesComeAndGo() {
    for (int limit : new int[] {3, 64}) {
      Random random = new Random(limit);
      PlanSettings settings = PlanSettings.defaults(new Topics("t")).withMappingPoolLimit(limit);
      SortedMap<String, ModelVersion> versions = new TreeMap<>();
      for (String m : MODELS) {
        versions.put(m + "/1", version(m, "1"));
      }
      SortedMap<String, HostEnvironment> hosts = new TreeMap<>();
      SortedMap<String, TimingEvent> timings = new TreeMap<>();
      Map<String, String> chosen = new TreeMap<>();
      MappingMatrix matrix = new MappingMatrix();
      java.util.ArrayDeque<String> fleet = new java.util.ArrayDeque<>();
      for (int step = 0; step < 120; step++) {
        Map<String, Set<String>> changedHosts = new TreeMap<>();
        if (fleet.size() == 8) {
          String gone = fleet.removeFirst();
          hosts.remove(gone);
          timings.values().removeIf(e -> e.getHost().equals(gone));
        }
        String joined = "n" + step;
        fleet.addLast(joined);
        hosts.put(joined, host(joined, random));
        for (String m : MODELS) {
          for (String pool : new String[] {"cpu", "gpu"}) {
            TimingEvent e = timing(m, "1", joined, pool, 1, 1 + random.nextInt(40));
            timings.put(Keys.timing(e), e);
          }
          chosen.put(Keys.modelHost(m, joined), "1");
          changedHosts.computeIfAbsent(m, k -> new TreeSet<>()).add(joined);
        }
        PlanInputs in = new PlanInputs(versions, new TreeMap<>(), hosts, new TreeMap<>(), new TreeMap<>(), timings,
            new TreeMap<>());
        MappingPlans.ChosenVersions lookUp = (model, host) -> chosen.get(Keys.modelHost(model, host));
        MappingPlans.Matrix kept = matrix.update(in, settings, lookUp, changedHosts, Set.of());
        MappingPlans.Matrix whole = MappingMatrix.full(in, settings, lookUp);
        String when = "limit " + limit + ", step " + step;
        assertThat(kept.resources()).as(when).isEqualTo(whole.resources());
        assertThat(kept.latency()).as(when).isEqualTo(whole.latency());
        assertThat(kept.hostOf()).as(when).isEqualTo(whole.hostOf());
      }
    }
  }

  @Test
  void shouldTakeTheMedianASortWouldGive() {
    Random random = new Random(2);
    for (int i = 0; i < 5000; i++) {
      List<Double> values = new ArrayList<>();
      int n = 1 + random.nextInt(40);
      for (int k = 0; k < n; k++) {
        values.add((double) (1 + random.nextInt(random.nextBoolean() ? 5 : 1000)));
      }
      List<Double> sorted = new ArrayList<>(values);
      sorted.sort(null);
      double expected = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
      assertThat(MappingPlans.median(values)).as("%s", values).isEqualTo(expected);
    }
  }

  private static ModelVersion version(String model, String v) {
    return ModelVersion.newBuilder().setModel(model).setVersion(v).setUri(model + "/" + v + "/model.onnx")
        .setSha256("ab".repeat(32)).setPrecision("fp32").setProviders(List.of("CPU")).setAccuracy(null)
        .setMemoryBytes(null).build();
  }

  /** One of two kinds of CPU (4 or 8 cores) with or without a GPU: hosts often alike. */
  private static HostEnvironment host(String id, Random random) {
    boolean gpu = random.nextBoolean();
    int cores = random.nextBoolean() ? 4 : 8;
    return HostEnvironment.newBuilder().setHostId(id).setCpuModel("cpu").setCpuFlags(List.of("avx2"))
        .setLogicalCores(cores).setPhysicalCores(cores).setUsableCores(cores).setUsableCpuIds(List.of())
        .setCpuQuotaCores(null).setMemoryBytes(64L << 30).setMemoryLimitBytes(null)
        .setGpus(gpu ? List.of(new Gpu(0, "A10", 24L << 30, "8.6")) : new ArrayList<>())
        .setOnnxRuntimeVersion("1.29.0").setExecutionProviders(gpu ? List.of("CPU", "CUDA") : List.of("CPU"))
        .setOsName("Linux").setOsVersion("6").setOsArch("amd64").setJavaVersion("17")
        .setBaseline(new BaselineScore(100.0, 1, 1, 4, 16, "ref")).setTimestamp(0).build();
  }

  private static TimingEvent timing(String model, String version, String host, String pool, int batch, double p50) {
    return TimingEvent.newBuilder().setModel(model).setVersion(version).setHost(host).setPool(pool).setSize(1)
        .setBatch(batch).setProvider(pool.equals("gpu") ? "CUDA" : "CPU").setGrouping(List.of()).setP50Ms(p50)
        .setP90Ms(p50).setP99Ms(p50).setMeanMs(p50).setSamples(100).setThroughput(1000.0 / p50)
        .setMemoryBytes(1 << 20).setStable(true).setPinned(true).setOk(true).setError(null).setRequestId(null)
        .setTimestamp(1).build();
  }
}

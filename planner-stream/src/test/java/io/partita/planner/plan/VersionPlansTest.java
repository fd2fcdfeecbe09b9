package io.partita.planner.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.BaselineScore;
import io.partita.avro.Gpu;
import io.partita.avro.HostEnvironment;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.TimingEvent;
import io.partita.planning.version.VersionPlan;
import io.partita.planning.version.VersionSelector;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A pass gives version choice the reduced problem of a host ({@link VersionPlans#reducedProblem}):
 * only the host's own observations when it measured every version, which must choose exactly as
 * the full problem with every host's observations and every other host; and a change on one host
 * re-plans only that host and the hosts that predict ({@link VersionPlans#predictingHosts}), which
 * must be every host whose choice the change can move.
 */
class VersionPlansTest {
  private static final String[] HOSTS = {"h0", "h1", "h2", "h3", "h4"};

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
      Set<String> predicting = VersionPlans.predictingHosts(in, "m", VersionPlans.evidence(in, "m"));
      for (String host : in.hosts().keySet()) {
        if (host.equals(changed) || predicting.contains(host)) {
          continue;
        }
        assertThat(VersionPlans.versionChoice(after, "m", host)).as("problem %d, %s", problem, host)
            .isEqualTo(VersionPlans.versionChoice(in, "m", host));
      }
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

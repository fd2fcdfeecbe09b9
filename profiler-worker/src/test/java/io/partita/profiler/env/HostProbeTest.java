package io.partita.profiler.env;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import java.util.List;
import org.junit.jupiter.api.Test;

class HostProbeTest {

  @Test
  void shouldDescribeAHostInACgroupV2ContainerWithGpus() {
    ProbedHost env = FixtureHosts.probe("xeon-cgroup2").probe("xeon-01", FixtureHosts.CPU_ONLY);
    assertThat(env.hostId()).isEqualTo("xeon-01");
    assertThat(env.cpuModel()).contains("8480+");
    assertThat(env.logicalCores()).isEqualTo(4);
    assertThat(env.physicalCores()).isEqualTo(2);
    assertThat(env.cpuQuotaCores()).isEqualTo(1.5); // the container's own cgroup, not the root's "max"
    assertThat(env.usableCores()).isEqualTo(1);
    assertThat(env.usableCpuIds()).containsExactly(0);
    assertThat(env.memoryBytes()).isEqualTo(16303360L * 1024);
    assertThat(env.memoryLimitBytes()).isEqualTo(4294967296L);
    assertThat(env.gpus()).hasSize(2).allSatisfy(g -> assertThat(g.computeCapability()).isEqualTo("9.0"));
    assertThat(env.executionProviders()).containsExactly("CPU");
    assertThat(env.baseline()).isNull();
    assertThat(FixtureHosts.probe("xeon-cgroup2").hostname()).isEqualTo("xeon-01");
  }

  @Test
  void shouldDescribeAHostWithACgroupV1QuotaAndAffinityAndNoGpu() {
    ProbedHost env = FixtureHosts.probe("epyc-cgroup1").probe("epyc", FixtureHosts.CPU_ONLY);
    assertThat(env.cpuQuotaCores()).isEqualTo(4.0);
    assertThat(env.usableCpuIds()).containsExactly(0, 1, 4, 5);
    assertThat(env.usableCores()).isEqualTo(4);
    assertThat(env.memoryLimitBytes()).isNull();
    assertThat(env.gpus()).isEmpty();
  }

  @Test
  void shouldUseEveryAllowedCpuWithoutCgroupFiles() {
    ProbedHost env = FixtureHosts.probe("arm-unlimited").probe("arm", FixtureHosts.CPU_ONLY);
    assertThat(env.cpuQuotaCores()).isNull();
    assertThat(env.usableCpuIds()).containsExactly(0, 1, 2, 3);
    assertThat(env.memoryLimitBytes()).isNull();
    assertThat(env.cpuFlags()).contains("sve");
  }

  @Test
  void shouldTellAChangedHostFromANewBaselineScore() {
    ProbedHost env = FixtureHosts.probe("arm-unlimited").probe("arm", FixtureHosts.CPU_ONLY);
    ProbedHost scored = env.withBaseline(new BaselineScore(1000, 2, 16, 10, 64, "mlp"));
    assertThat(scored.sameHostAs(env)).isTrue();
    ProbedHost otherProviders = FixtureHosts.probe("arm-unlimited")
        .probe("arm", new OrtInfo("1.29.0", List.of("CPU", "CUDA"), java.util.Map.of()));
    assertThat(otherProviders.sameHostAs(env)).isFalse();
  }

  @Test
  void shouldProbeThisMachine() {
    HostProbe probe = HostProbe.live();
    ProbedHost env = probe.probe(probe.hostname(), ProviderProbe.probe(OrtEnvironment.getEnvironment()));
    assertThat(env.logicalCores()).isPositive();
    assertThat(env.physicalCores()).isBetween(1, env.logicalCores());
    assertThat(env.usableCores()).isBetween(1, env.logicalCores());
    assertThat(env.usableCores()).isLessThanOrEqualTo(Runtime.getRuntime().availableProcessors());
    assertThat(env.memoryBytes()).isPositive();
    assertThat(env.executionProviders()).startsWith("CPU");
    assertThat(env.onnxRuntimeVersion()).matches("\\d+\\.\\d+\\.\\d+.*");
    assertThat(env.javaVersion()).startsWith(String.valueOf(Runtime.version().feature()));
    assertThat(env.hostId()).isNotBlank();
  }
}

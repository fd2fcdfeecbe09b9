package io.partita.profiler.env;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class ParsersTest {

  @Test
  void shouldCountHyperThreadsAsLogicalAndTheirCoresOnce() {
    CpuInfo cpu = CpuInfo.parse(FixtureHosts.read("xeon-cgroup2", "proc/cpuinfo"));
    assertThat(cpu.model()).isEqualTo("Intel(R) Xeon(R) Platinum 8480+");
    assertThat(cpu.logicalCores()).isEqualTo(4);
    assertThat(cpu.physicalCores()).isEqualTo(2);
    assertThat(cpu.flags()).contains("avx2", "avx512f", "avx512_vnni", "amx_tile", "amx_int8")
        .doesNotContain("fpu", "arch_capabilities")
        .isSorted();
  }

  @Test
  void shouldCountCoresPerSocket() {
    CpuInfo cpu = CpuInfo.parse(FixtureHosts.read("epyc-cgroup1", "proc/cpuinfo"));
    assertThat(cpu.logicalCores()).isEqualTo(8);
    assertThat(cpu.physicalCores()).isEqualTo(8); // 2 sockets x core ids 0..3
    assertThat(cpu.flags()).containsExactly("avx", "avx2", "f16c", "fma", "sse4_1", "sse4_2");
  }

  @Test
  void shouldReadArmFeaturesAndFallBackToLogicalCores() {
    CpuInfo cpu = CpuInfo.parse(FixtureHosts.read("arm-unlimited", "proc/cpuinfo"));
    assertThat(cpu.model()).isEqualTo("unknown");
    assertThat(cpu.logicalCores()).isEqualTo(4);
    assertThat(cpu.physicalCores()).isEqualTo(4);
    assertThat(cpu.flags()).contains("asimd", "asimddp", "sve", "i8mm", "bf16").doesNotContain("aes");
  }

  @Test
  void shouldRefuseCpuinfoWithoutProcessors() {
    assertThatThrownBy(() -> CpuInfo.parse("garbage\n")).hasMessageContaining("processor");
  }

  @Test
  void shouldParseCpuLists() {
    assertThat(ProcFiles.parseCpuList("0-3,8,10-11\n")).containsExactly(0, 1, 2, 3, 8, 10, 11);
    assertThat(ProcFiles.parseCpuList("5")).containsExactly(5);
    assertThat(ProcFiles.parseCpuList("")).isEmpty();
    assertThatThrownBy(() -> ProcFiles.parseCpuList("3-1")).hasMessageContaining("descending");
    assertThatThrownBy(() -> ProcFiles.parseCpuList("a-b")).hasMessageContaining("bad entry 'a-b'");
  }

  @Test
  void shouldReadAllowedCpusAndRssFromProcSelfStatus() {
    String status = FixtureHosts.read("xeon-cgroup2", "proc/self/status");
    assertThat(ProcFiles.allowedCpus(status)).containsExactly(0, 1, 2, 3);
    assertThat(ProcFiles.kibField(status, "VmRSS")).hasValue(123456L * 1024);
    assertThat(ProcFiles.kibField(status, "VmHWM")).isEmpty();
  }

  @Test
  void shouldTreatHugeV1MemoryLimitsAsNone() {
    assertThat(ProcFiles.memoryLimit("9223372036854771712", 1L << 34)).isEmpty();
    assertThat(ProcFiles.memoryLimit("max", 1L << 34)).isEmpty();
    assertThat(ProcFiles.memoryLimit("4294967296\n", 1L << 34)).hasValue(4294967296L);
  }

  @Test
  void shouldCutUsableCpusToTheQuotaRoundedDown() {
    assertThat(ProcFiles.usableCpus(List.of(0, 1, 2, 3), OptionalDouble.of(1.5))).containsExactly(0);
    assertThat(ProcFiles.usableCpus(List.of(0, 1, 2, 3), OptionalDouble.of(0.2))).containsExactly(0);
    assertThat(ProcFiles.usableCpus(List.of(2, 3), OptionalDouble.of(8))).containsExactly(2, 3);
    assertThat(ProcFiles.usableCpus(List.of(2, 3), OptionalDouble.empty())).containsExactly(2, 3);
  }

  @Test
  void shouldParseNvidiaSmiCsv() {
    List<Gpu> gpus = Gpu.parseNvidiaSmi(FixtureHosts.read("xeon-cgroup2", "nvidia-smi.csv"));
    assertThat(gpus).containsExactly(
        new Gpu(0, "NVIDIA H100 80GB HBM3", 81559L * 1024 * 1024, "9.0"),
        new Gpu(1, "NVIDIA H100 80GB HBM3", 81559L * 1024 * 1024, "9.0"));
    assertThat(Gpu.parseNvidiaSmi("\n")).isEmpty();
    assertThatThrownBy(() -> Gpu.parseNvidiaSmi("No devices were found")).hasMessageContaining("No devices were found");
    assertThatThrownBy(() -> Gpu.parseNvidiaSmi("T4, [N/A], 7.5")).hasMessageContaining("[N/A]");
  }
}

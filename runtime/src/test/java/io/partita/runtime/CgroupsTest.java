package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CgroupsTest {
  @TempDir
  Path root;

  @Test
  void shouldParseCgroupV2CpuMax() {
    assertThat(Cgroups.cpuMaxV2("150000 100000\n")).hasValue(1.5);
    assertThat(Cgroups.cpuMaxV2("max 100000")).isEmpty();
    assertThat(Cgroups.cpuMaxV2("200000")).hasValue(2.0);
  }

  @Test
  void shouldParseCgroupV1CfsQuota() {
    assertThat(Cgroups.cfsQuotaV1("400000\n", "100000\n")).hasValue(4.0);
    assertThat(Cgroups.cfsQuotaV1("-1", "100000")).isEmpty();
    assertThatThrownBy(() -> Cgroups.cfsQuotaV1("1", "0")).hasMessageContaining("period");
  }

  @Test
  void shouldReadTheProcessOwnV1CgroupBeforeTheMountRoot() throws IOException {
    write("proc/self/cgroup", "4:cpu,cpuacct:/partita/host-2\n3:memory:/\n");
    write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    write("sys/fs/cgroup/cpu,cpuacct/partita/host-2/cpu.cfs_quota_us", "20000\n");
    write("sys/fs/cgroup/cpu,cpuacct/partita/host-2/cpu.cfs_period_us", "100000\n");

    assertThat(new Cgroups(root).cpuQuota()).hasValue(0.2);
  }

  @Test
  void shouldFallBackToTheMountRootAndFindNoLimitWithoutFiles() throws IOException {
    assertThat(new Cgroups(root).cpuQuota()).isEmpty();

    write("proc/self/cgroup", "0::/gone\n");
    write("sys/fs/cgroup/cpu.max", "150000 100000\n");
    assertThat(new Cgroups(root).cpuQuota()).hasValue(1.5);
    assertThat(new Cgroups(root).value("", "memory.max")).isEmpty();
  }

  private void write(String relative, String text) throws IOException {
    Path file = root.resolve(relative);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }
}

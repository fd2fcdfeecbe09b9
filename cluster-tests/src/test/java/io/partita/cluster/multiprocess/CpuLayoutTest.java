package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.launcher.cluster.CpuLayout;
import io.partita.launcher.cluster.CpuLayout.Placement;
import io.partita.launcher.cluster.Quota;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where the infrastructure and the worker hosts run, and when quotas do not fit. */
class CpuLayoutTest {

  private static Map<String, Double> hosts(double... quotas) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (int i = 0; i < quotas.length; i++) {
      out.put("host-" + (i + 1), quotas[i]);
    }
    return out;
  }

  @Test
  void shouldGiveTheInfrastructureCpuZeroAndTheHostsCpuOneOnTwoCores() {
    CpuLayout layout = CpuLayout.of(List.of(1, 0));

    assertThat(layout.infra()).containsExactly(0);
    assertThat(layout.workers()).containsExactly(1);
    assertThat(layout.separate()).isTrue();
    assertThat(layout.place(Map.of(), hosts(0.6, 0.2))).containsExactly(Map.entry("host-1", List.of(1)), Map.entry("host-2", List.of(1)));
  }

  @Test
  void shouldGiveTheInfrastructureAQuarterOfManyCores() {
    CpuLayout layout = CpuLayout.of(List.of(0, 1, 2, 3, 4, 5, 6, 7));

    assertThat(layout.infra()).containsExactly(0, 1);
    assertThat(layout.workers()).containsExactly(2, 3, 4, 5, 6, 7);
  }

  @Test
  void shouldShareTheOnlyCpuAndSaySoWithOneCore() {
    CpuLayout layout = CpuLayout.of(List.of(0));

    assertThat(layout.separate()).isFalse();
    assertThat(layout.workers()).containsExactly(0);
  }

  @Test
  void shouldRefuseQuotasThatDoNotFitNamingTheHostAndWhatIsLeft() {
    CpuLayout layout = CpuLayout.of(List.of(0, 1));

    assertThatThrownBy(() -> layout.place(Map.of(), hosts(0.6, 0.6)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("host-2 needs 0.6 of a core, but the CPUs for worker hosts (CPU 1) have 0.4 left"
            + " (CPU 0 runs brokers, planners and gateways); lower the quotas");
  }

  @Test
  void shouldPlaceANewHostBesideTheRunningOnesOnlyWhenItFits() {
    CpuLayout layout = CpuLayout.of(List.of(0, 1));
    Map<String, Placement> running = Map.of("host-1", new Placement(List.of(1), 0.6), "host-2", new Placement(List.of(1), 0.2));

    assertThat(layout.place(running, Map.of("host-3", 0.2))).containsEntry("host-3", List.of(1));
    assertThatThrownBy(() -> layout.place(running, Map.of("host-3", 0.4))).hasMessageContaining("host-3 needs 0.4 of a core")
        .hasMessageContaining("have 0.2 left");
  }

  @Test
  void shouldSpreadAQuotaOfMoreThanOneCoreOverWholeCpus() {
    CpuLayout layout = CpuLayout.of(List.of(0, 1, 2, 3, 4));

    Map<String, List<Integer>> placed = layout.place(Map.of(), hosts(1.5, 0.5, 1.0));

    assertThat(placed.get("host-1")).containsExactly(1, 2);
    assertThat(placed.get("host-2")).containsExactly(3);
    assertThat(placed.get("host-3")).containsExactly(4);
    assertThatThrownBy(() -> layout.place(Map.of(), hosts(4.5))).hasMessageContaining("(0.9 on each of 5 CPUs)");
  }

  @Test
  void shouldWriteAndReadTheCpusetForm() {
    assertThat(CpuLayout.cpuset(List.of(3, 0, 1, 2, 6))).isEqualTo("0-3,6");
    assertThat(CpuLayout.parseCpuset("0-3,6\n")).containsExactly(0, 1, 2, 3, 6);
    assertThat(CpuLayout.cpuList(List.of(1))).isEqualTo("CPU 1");
  }

  @Test
  void shouldParseQuotasAndRefuseWhatIsNotOneNamingTheFlag() {
    assertThat(Quota.parseList("--worker-cpus", "0.6,0.2")).containsExactly(0.6, 0.2);
    assertThat(Quota.quotaMicros(0.6)).isEqualTo(6_000);
    assertThat(Quota.periodMicros(0.6)).isEqualTo(10_000);
    assertThat(Quota.periodMicros(0.05)).as("a quota stays at least 1 ms").isEqualTo(20_000);
    assertThat(Quota.quotaMicros(0.05)).isEqualTo(1_000);
    assertThat(Quota.format(0.25)).isEqualTo("0.25");
    assertThat(Quota.format(1.0)).isEqualTo("1");
    assertThatThrownBy(() -> Quota.parseList("--worker-cpus", "0.6,abc"))
        .hasMessage("--worker-cpus: 'abc' is not a number of cores (e.g. 0.6 for 60% of a core)");
    assertThatThrownBy(() -> Quota.parseList("--worker-cpus", "0.6,,0.2")).hasMessageContaining("has an empty entry");
    assertThatThrownBy(() -> Quota.parse("--cpus", "0")).hasMessage("--cpus: 0 is not a quota: give at least 0.01 of a core");
    assertThatThrownBy(() -> Quota.parse("--cpus", "NaN")).hasMessageContaining("is not a quota");
  }
}

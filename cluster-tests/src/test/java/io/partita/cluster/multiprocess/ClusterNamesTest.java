package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.launcher.cluster.ClusterNames;
import io.partita.launcher.cluster.ClusterPlan;
import io.partita.launcher.cluster.GroupKind;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The names a cluster gives the system: derived from its directory, short enough, apart from another cluster's. */
class ClusterNamesTest {

  @Test
  void shouldDeriveTheSameIdFromTheSameDirectoryAndAnotherFromAnother() {
    ClusterNames a = ClusterNames.of(Path.of("/tmp/one"));

    assertThat(ClusterNames.of(Path.of("/tmp/x/../one/"))).isEqualTo(a);
    assertThat(ClusterNames.of(Path.of("/tmp/two"))).isNotEqualTo(a);
    assertThat(a.id()).matches("pt[0-9a-f]{6}");
  }

  @Test
  void shouldKeepEveryInterfaceNameWithinFifteenCharactersAndUnderTheClusterPrefix() {
    ClusterNames names = ClusterNames.of(Path.of("/tmp/one"));
    int lastSlot = GroupKind.HOST.slot(GroupKind.HOST.max());

    assertThat(lastSlot).isLessThanOrEqualTo(254);
    for (String link : new String[] {names.bridge(), names.hostVeth(lastSlot), names.peerVeth(lastSlot)}) {
      assertThat(link).hasSizeLessThanOrEqualTo(ClusterNames.MAX_INTERFACE_NAME).startsWith(names.id());
    }
    assertThat(names.namespace("host-1")).isEqualTo(names.id() + "-host-1");
    assertThat(names.cgroup("broker-2")).isEqualTo(names.id() + "/broker-2");
    assertThat(names.mark()).isEqualTo("-Dpartita.cluster=" + names.id());
  }

  @Test
  void shouldGiveEachGroupItsOwnSlotAndParseTargets() {
    Set<Integer> slots = new HashSet<>();
    for (GroupKind kind : GroupKind.values()) {
      for (int i = 1; i <= kind.max(); i++) {
        assertThat(slots.add(kind.slot(i))).as("%s slot %d", kind, kind.slot(i)).isTrue();
        assertThat(GroupKind.parse(kind.groupName(i))).isEqualTo(new GroupKind.Target(kind, i));
      }
    }
    assertThat(GroupKind.BROKER.slot(2)).isEqualTo(12);
    assertThat(GroupKind.HOST.slot(1)).isEqualTo(101);
    assertThatThrownBy(() -> GroupKind.parse("worker-1"))
        .hasMessage("'worker-1' is not a target: expected host-N, broker-N, planner-N or gateway-N");
    assertThatThrownBy(() -> GroupKind.parse("broker-10")).hasMessageContaining("out of range 1..9");
  }

  @Test
  void shouldUseOnlyTheBenchmarkingRange() {
    assertThat(ClusterPlan.subnet(0)).isEqualTo("198.18.0");
    assertThat(ClusterPlan.subnet(511)).isEqualTo("198.19.255");
    assertThat(ClusterPlan.subnet(512)).isEqualTo("198.18.0");
    for (int i = 0; i < 1024; i++) {
      assertThat(ClusterPlan.subnet(i)).matches("198\\.1[89]\\.\\d{1,3}");
    }
    ClusterNames names = ClusterNames.of(Path.of("/tmp/one"));
    assertThat(names.subnetIndex()).isBetween(0, 511);
  }
}

package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.launcher.cluster.ClusterNames;
import io.partita.launcher.cluster.ClusterPlan;
import io.partita.launcher.cluster.ClusterState;
import io.partita.launcher.cluster.GroupKind;
import io.partita.launcher.cluster.GroupRecord;
import io.partita.launcher.cluster.NetworkMode;
import io.partita.launcher.cluster.ProcessRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The state file: read back as written, replaced whole, and a broken one named. */
class ClusterStateTest {
  @TempDir Path dir;

  private ClusterState state() {
    ClusterNames names = ClusterNames.of(dir);
    GroupRecord broker = ClusterPlan.group(names, NetworkMode.NETNS, "198.19.3", GroupKind.BROKER, 1, List.of(0), 0, () -> 0);
    GroupRecord host = ClusterPlan.group(names, NetworkMode.NETNS, "198.19.3", GroupKind.HOST, 1, List.of(1), 0.6, () -> 0);
    ClusterState state = new ClusterState(names.id(), dir.toString(), NetworkMode.NETNS, "198.19.3", "q1Sh-9_ISia_zwGINzRvyQ",
        dir.resolve("models").toString(), "/usr/bin/java", dir.resolve("run/classpath.args").toString(), List.of(), List.of(0),
        List.of(1), Map.of("PARTITA_GATEWAY_ROUTING", "plan"), List.of(broker, host), List.of());
    for (GroupRecord g : state.groups()) {
      for (ProcessRecord p : ClusterPlan.processes(state, g)) {
        state = state.with(p);
      }
    }
    return state;
  }

  @Test
  void shouldReadBackWhatItWrote() throws Exception {
    ClusterState state = state().with(state().processes().get(1).withPid(4242));

    state.write(dir);

    assertThat(ClusterState.read(dir)).contains(state);
    assertThat(Files.readString(dir.resolve(ClusterState.FILE))).contains("\"pid\" : 4242", "\"network\" : \"NETNS\"");
    assertThat(dir.resolve(ClusterState.FILE + ".tmp")).doesNotExist();
  }

  @Test
  void shouldReplaceAProcessInPlaceAndAddANewGroup() {
    ClusterState state = state();
    ProcessRecord worker = state.processesOf("host-1").get(0);

    ClusterState changed = state.with(worker.withPid(7));
    GroupRecord host2 = ClusterPlan.group(state.names(), NetworkMode.NETNS, "198.19.3", GroupKind.HOST, 2, List.of(1), 0.2, () -> 0);
    ClusterState grown = changed.with(host2);

    assertThat(changed.processes()).hasSameSizeAs(state.processes());
    assertThat(changed.processesOf("host-1").get(0).pid()).isEqualTo(7);
    assertThat(changed.processes().indexOf(changed.processesOf("host-1").get(0))).isEqualTo(state.processes().indexOf(worker));
    assertThat(grown.groups(GroupKind.HOST)).extracting(GroupRecord::name).containsExactly("host-1", "host-2");
    assertThat(grown.with(host2).groups()).hasSize(3);
  }

  @Test
  void shouldSayThereIsNoStateAndNameABrokenFile() throws Exception {
    assertThat(ClusterState.read(dir)).isEmpty();

    Files.writeString(dir.resolve(ClusterState.FILE), "{\"id\": ");

    assertThatThrownBy(() -> ClusterState.read(dir)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(dir.resolve(ClusterState.FILE) + ": the cluster state cannot be read");
  }
}

package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.launcher.Partita;
import io.partita.launcher.cluster.Cluster;
import io.partita.launcher.cluster.ClusterNames;
import io.partita.launcher.cluster.ClusterState;
import io.partita.launcher.cluster.ProcessRecord;
import io.partita.testkit.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Nothing is left behind when things go wrong: an {@code up} that fails half-way (after its
 * namespaces, cgroups and first processes exist) removes all it made, and {@code down} removes a
 * cluster whose {@code up} was killed and whose state file is gone, by the cluster's prefix alone.
 * Needs root (CI runs as root); skips, saying why, elsewhere.
 */
@Tag("cluster")
class ClusterCleanupIT {

  @BeforeEach
  void needsNamespaces() {
    ClusterMachine.assumeNamespacesAndCgroups();
  }

  @Test
  void shouldRemoveEverythingWhenUpFailsHalfWay() throws Exception {
    Path dir = ClusterMachine.freshDir("failed-up");
    ClusterNames names = ClusterNames.of(dir);
    try {
      // Every JVM refuses this option, so each process dies at once, after its namespace, cgroups
      // and the processes started before it exist.
      assertThatThrownBy(() -> Cluster.up(ClusterMachine.spec(dir, 1, "0.3", 1, List.of("-XX:+NoSuchOptionForPartita")), System.err))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("broker-1 (pid ")
          .hasMessageContaining("exited while the cluster was starting")
          .hasMessageContaining("NoSuchOptionForPartita");

      assertThat(ClusterMachine.leftovers(names)).as("what %s left", names.id()).isEmpty();
      assertThat(dir.resolve(ClusterState.FILE)).doesNotExist();
      assertThat(dir.resolve("logs").resolve("broker-1.log")).content().contains("NoSuchOptionForPartita");
    } finally {
      ClusterMachine.down(dir);
    }
  }

  @Test
  void shouldRemoveAClusterWhoseUpWasKilledAndWhoseStateFileIsGone() throws Exception {
    Path dir = ClusterMachine.freshDir("lost-state");
    ClusterNames names = ClusterNames.of(dir);
    Process up = ChildJvm.start(Partita.class, "256m", dir.resolveSibling("lost-state-up.log"),
        List.of("cluster", "up", "--dir", dir.toString(), "--brokers", "1", "--worker-cpus", "0.3", "--gateways", "1", "--network", "netns"));
    try {
      // Wait until up has made its namespaces and cgroups and started its first processes.
      Awaitility.await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() -> {
        try {
          return ClusterState.read(dir).map(s -> s.processes().stream().filter(p -> p.pid() > 0).count() >= 1).orElse(false);
        } catch (RuntimeException e) {
          return false; // being written
        }
      });
      List<Long> started = ClusterState.read(dir).orElseThrow().processes().stream().map(ProcessRecord::pid).filter(p -> p > 0).toList();
      up.destroyForcibly(); // SIGKILL: up's own clean-up does not run
      up.waitFor();
      Files.delete(dir.resolve(ClusterState.FILE));
      assertThat(ClusterMachine.leftovers(names)).as("the killed up left its cluster running").isNotEmpty();

      Cluster.Leftovers left = Cluster.down(dir, System.err);

      assertThat(left.empty()).as("down's own view: %s", left).isTrue();
      assertThat(ClusterMachine.leftovers(names)).as("what %s left", names.id()).isEmpty();
      for (long pid : started) {
        assertThat(ClusterMachine.running(pid)).as("pid %d", pid).isFalse();
      }
    } finally {
      up.destroyForcibly();
      ClusterMachine.down(dir);
    }
  }
}

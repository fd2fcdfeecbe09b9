package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.launcher.cluster.ClusterSpec;
import io.partita.launcher.cluster.NetworkMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code partita cluster up} accepts, and how it refuses the rest (naming the flag). */
class ClusterSpecTest {
  @TempDir Path dir;

  private ClusterSpec spec(Integer brokers, Integer workers, String cpus, Integer gateways) {
    return ClusterSpec.of(dir, brokers, workers, cpus, gateways, null, null, null, null, null, "cp");
  }

  @Test
  void shouldDefaultToThreeBrokersTwoHostsOfDifferentSpeedsAndTwoGateways() {
    ClusterSpec spec = spec(null, null, null, null);

    assertThat(spec.brokers()).isEqualTo(3);
    assertThat(spec.workerCpus()).containsExactly(0.6, 0.2);
    assertThat(spec.hostNames()).containsExactly("host-1", "host-2");
    assertThat(spec.gateways()).isEqualTo(2);
    assertThat(spec.network()).isEqualTo(NetworkMode.AUTO);
    assertThat(spec.timeout()).isEqualTo(Duration.ofMinutes(5));
    assertThat(spec.dir()).isAbsolute();
  }

  @Test
  void shouldShareEightTenthsOfACoreWhenOnlyTheHostCountIsGiven() {
    assertThat(spec(null, 3, null, null).workerCpus()).containsExactly(0.26, 0.26, 0.26);
    assertThat(spec(null, null, "0.5,0.25,0.1", null).workerCpus()).containsExactly(0.5, 0.25, 0.1);
  }

  @Test
  void shouldRefuseEachBadFlagNamingIt() {
    assertThatThrownBy(() -> spec(0, null, null, null)).hasMessage("--brokers 0: give 1 to 9");
    assertThatThrownBy(() -> spec(10, null, null, null)).hasMessage("--brokers 10: give 1 to 9");
    assertThatThrownBy(() -> spec(null, null, null, 0)).hasMessage("--gateways 0: give 1 to 9");
    assertThatThrownBy(() -> spec(null, 0, null, null)).hasMessage("--workers 0: give at least 1");
    assertThatThrownBy(() -> spec(null, 2, "0.6", null))
        .hasMessage("--worker-cpus gives 1 quota but --workers is 2: give one quota per worker host");
    assertThatThrownBy(() -> spec(null, null, "fast", null)).hasMessageStartingWith("--worker-cpus: 'fast' is not a number");
    assertThatThrownBy(() -> ClusterSpec.of(dir, null, null, null, null, dir.resolve("nowhere"), null, null, null, List.of(), "cp"))
        .hasMessageEndingWith("nowhere: not a directory").hasMessageStartingWith("--model-repo ");
    assertThatThrownBy(() -> ClusterSpec.of(dir, null, null, null, null, null, null, Duration.ZERO, null, List.of(), "cp"))
        .hasMessageStartingWith("--timeout 0");
    assertThatThrownBy(() -> ClusterSpec.of(dir, null, null, null, null, null, null, null, dir.resolve("x.env"), List.of(), "cp"))
        .hasMessageStartingWith("--env-file ").hasMessageEndingWith("x.env: no such file");
  }
}

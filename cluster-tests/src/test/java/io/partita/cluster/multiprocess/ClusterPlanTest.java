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
import io.partita.launcher.cluster.Role;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** From spec and shared settings to each process's environment and command line. */
class ClusterPlanTest {
  private static final ClusterNames NAMES = ClusterNames.of(Path.of("/tmp/plan-test"));

  private static final Map<String, String> SHARED = Map.of(
      "KAFKA_DEFAULT_REPLICATION_FACTOR", "3", "KAFKA_MIN_INSYNC_REPLICAS", "2",
      "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "3", "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "3",
      "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "2", "PARTITA_TOPICS_REPLICATION", "3", "PARTITA_PLANNER_REPLICATION_FACTOR", "3",
      "PARTITA_KAFKA_BOOTSTRAP_SERVERS", "kafka-1:9092", "PARTITA_GATEWAY_ROUTING", "plan");

  @Test
  void shouldKeepTheSharedSettingsAsTheyAreWithThreeBrokers() {
    List<String> notes = new ArrayList<>();

    Map<String, String> env = ClusterPlan.environment(SHARED, 3, notes);

    assertThat(notes).isEmpty();
    assertThat(env).containsEntry("KAFKA_MIN_INSYNC_REPLICAS", "2").containsEntry("PARTITA_TOPICS_REPLICATION", "3")
        .containsEntry("PARTITA_GATEWAY_ROUTING", "plan")
        .doesNotContainKey("PARTITA_KAFKA_BOOTSTRAP_SERVERS"); // each process is given the cluster's own
  }

  @Test
  void shouldCapReplicationAtTheBrokerCountAndSaySo() {
    List<String> two = new ArrayList<>();
    List<String> one = new ArrayList<>();

    Map<String, String> envTwo = ClusterPlan.environment(SHARED, 2, two);
    Map<String, String> envOne = ClusterPlan.environment(SHARED, 1, one);

    assertThat(envTwo).containsEntry("KAFKA_DEFAULT_REPLICATION_FACTOR", "2").containsEntry("KAFKA_MIN_INSYNC_REPLICAS", "1")
        .containsEntry("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1").containsEntry("PARTITA_PLANNER_REPLICATION_FACTOR", "2");
    assertThat(two).singleElement().asString().startsWith("with 2 brokers the replication factor is 2 and the min ISR 1")
        .contains("KAFKA_MIN_INSYNC_REPLICAS 2 -> 1").endsWith("one broker down stops writes");
    assertThat(envOne).containsEntry("PARTITA_TOPICS_REPLICATION", "1").containsEntry("KAFKA_MIN_INSYNC_REPLICAS", "1");
    assertThat(one).singleElement().asString().startsWith("with 1 broker the replication factor is 1");
  }

  @Test
  void shouldRefuseASharedSettingThatIsNotANumber() {
    Map<String, String> bad = new LinkedHashMap<>(SHARED);
    bad.put("KAFKA_MIN_INSYNC_REPLICAS", "two");

    assertThatThrownBy(() -> ClusterPlan.environment(bad, 3, new ArrayList<>()))
        .hasMessage("KAFKA_MIN_INSYNC_REPLICAS=two in the settings file: not a whole number");
  }

  private static ClusterState state(NetworkMode mode) {
    AtomicInteger port = new AtomicInteger(40000);
    List<GroupRecord> groups = new ArrayList<>();
    String subnet = "198.18.7";
    for (int i = 1; i <= 3; i++) {
      groups.add(ClusterPlan.group(NAMES, mode, subnet, GroupKind.BROKER, i, List.of(0), 0, port::incrementAndGet));
    }
    groups.add(ClusterPlan.group(NAMES, mode, subnet, GroupKind.PLANNER, 1, List.of(0), 0, port::incrementAndGet));
    groups.add(ClusterPlan.group(NAMES, mode, subnet, GroupKind.GATEWAY, 1, List.of(0), 0, port::incrementAndGet));
    groups.add(ClusterPlan.group(NAMES, mode, subnet, GroupKind.HOST, 2, List.of(1), 0.2, port::incrementAndGet));
    return new ClusterState(NAMES.id(), "/tmp/plan-test", mode, mode == NetworkMode.NETNS ? subnet : null, "q1Sh-9_ISia_zwGINzRvyQ",
        "/tmp/plan-test/models", "/usr/bin/java", "/tmp/plan-test/run/classpath.args", List.of("-Xlog:gc"), List.of(0), List.of(1),
        Map.of(), groups, List.of());
  }

  @Test
  void shouldGiveEachGroupItsAddressNamespaceAndCgroupInANamespace() {
    ClusterState state = state(NetworkMode.NETNS);
    GroupRecord broker = state.group("broker-2").orElseThrow();
    GroupRecord host = state.group("host-2").orElseThrow();

    assertThat(broker.address()).isEqualTo("198.18.7.12");
    assertThat(broker.ports()).containsEntry("client", 9092).containsEntry("controller", 9093);
    assertThat(broker.namespace()).isEqualTo(NAMES.id() + "-broker-2");
    assertThat(broker.hostVeth()).isEqualTo(NAMES.id() + "v12");
    assertThat(host.cgroup()).isEqualTo(NAMES.id() + "/host-2");
    assertThat(host.quota()).isEqualTo(0.2);
    assertThat(state.group("gateway-1").orElseThrow().ports()).containsEntry("http", 8080).containsEntry("grpc", 8001);
    assertThat(state.bootstrap()).isEqualTo("198.18.7.11:9092,198.18.7.12:9092,198.18.7.13:9092");
  }

  @Test
  void shouldUseLoopbackPortsAndNoNamespaceOnLoopback() {
    ClusterState state = state(NetworkMode.LOOPBACK);
    GroupRecord broker = state.group("broker-1").orElseThrow();

    assertThat(broker.address()).isEqualTo("127.0.0.1");
    assertThat(broker.ports()).containsEntry("client", 40001).containsEntry("controller", 40002);
    assertThat(broker.namespace()).isNull();
    assertThat(broker.hostVeth()).isNull();
    assertThat(broker.cgroup()).isNull();
  }

  @Test
  void shouldBuildEachRolesCommandLine() {
    ClusterState state = state(NetworkMode.NETNS);

    ProcessRecord broker = ClusterPlan.processes(state, state.group("broker-3").orElseThrow()).get(0);
    List<ProcessRecord> host = ClusterPlan.processes(state, state.group("host-2").orElseThrow());
    ProcessRecord gateway = ClusterPlan.processes(state, state.group("gateway-1").orElseThrow()).get(0);
    ProcessRecord planner = ClusterPlan.processes(state, state.group("planner-1").orElseThrow()).get(0);

    assertThat(broker.role()).isEqualTo(Role.BROKER);
    assertThat(broker.argv()).startsWith("/usr/bin/java", "-Xmx512m").contains(NAMES.mark(), "-Xlog:gc",
        "@/tmp/plan-test/run/classpath.args", ClusterPlan.MAIN_CLASS);
    assertThat(String.join(" ", broker.argv())).endsWith("broker --node-id 3 --cluster-id q1Sh-9_ISia_zwGINzRvyQ"
        + " --listener 198.18.7.13:9092 --controller 198.18.7.13:9093"
        + " --voters 1@198.18.7.11:9093,2@198.18.7.12:9093,3@198.18.7.13:9093 --data-dir /tmp/plan-test/data/broker-3");
    assertThat(broker.log()).isEqualTo("/tmp/plan-test/logs/broker-3.log");
    assertThat(host).extracting(ProcessRecord::name).containsExactly("host-2-worker", "host-2-profiler");
    assertThat(host).extracting(ProcessRecord::hostId).containsOnly("host-2");
    assertThat(String.join(" ", host.get(0).argv())).endsWith("worker --bootstrap " + state.bootstrap()
        + " --model-repo /tmp/plan-test/models --host-id host-2 --set worker.group.instance.id=host-2-worker");
    assertThat(String.join(" ", host.get(1).argv())).endsWith("profiler --bootstrap " + state.bootstrap()
        + " --model-repo /tmp/plan-test/models --host-id host-2 --profile-at-start --profile-budget-ms 100");
    assertThat(String.join(" ", gateway.argv())).endsWith("gateway --bootstrap " + state.bootstrap()
        + " --http-port 8080 --grpc-port 8001 --set gateway.id=gateway-1");
    assertThat(String.join(" ", planner.argv())).endsWith("--state-dir /tmp/plan-test/data/planner-1"
        + " --set planner.group.instance.id=planner-1 --set host.id=planner-1");
    // The brokers, through which every call passes, keep the optimizing compiler; the rest stop at C1.
    assertThat(broker.argv()).doesNotContain("-XX:TieredStopAtLevel=1");
    assertThat(List.of(host.get(0), host.get(1), gateway, planner))
        .allSatisfy(p -> assertThat(p.argv()).contains("-XX:TieredStopAtLevel=1"));
  }
}

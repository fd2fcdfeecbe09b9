package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.launcher.cluster.Cluster;
import io.partita.launcher.cluster.ClusterNames;
import io.partita.launcher.cluster.ClusterState;
import io.partita.launcher.cluster.GroupKind;
import io.partita.launcher.cluster.GroupRecord;
import io.partita.launcher.cluster.ProcessRecord;
import io.partita.launcher.cluster.Role;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A real cluster of separate processes, started once for the class through {@link Cluster#up}
 * (what {@code partita cluster up} calls): 3 brokers, 2 planners, 2 gateways and 2 worker hosts of
 * 0.6 and 0.2 of a core, each group in its own network namespace and cgroups. Checked from outside:
 * the processes and their roles, every printed address, the namespaces, cgroups and quotas, then
 * faults and what status says of them, and at the end that {@code down} leaves nothing with the
 * cluster's name on this machine. Needs root (CI runs as root); skips, saying why, elsewhere.
 */
@Tag("cluster")
@Tag("slow")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterUpIT {
  private static Path dir;
  private static ClusterNames names;
  private static Cluster.UpResult up;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  @BeforeAll
  static void startCluster() throws Exception {
    ClusterMachine.assumeNamespacesAndCgroups();
    dir = ClusterMachine.freshDir("up-it");
    names = ClusterNames.of(dir);
    up = Cluster.up(ClusterMachine.spec(dir, 3, "0.6,0.2", 2, List.of()), System.err);
  }

  @AfterAll
  static void downLeavesNothing() throws Exception {
    if (dir == null) {
      return; // skipped
    }
    Cluster.Leftovers left = Cluster.down(dir, System.err);
    assertThat(left.empty()).as("down's own view: %s", left).isTrue();
    assertThat(ClusterMachine.leftovers(names)).as("namespaces, links, cgroups and processes named %s", names.id()).isEmpty();
    assertThat(dir.resolve(ClusterState.FILE)).doesNotExist();
    assertThat(Cluster.down(dir, System.err).empty()).as("down again is a no-op").isTrue();
  }

  private static ClusterState state() throws IOException {
    return ClusterState.read(dir).orElseThrow();
  }

  private static Map<String, String> statusStates() throws IOException {
    return Cluster.status(dir).stream().collect(Collectors.toMap(Cluster.Status::name, Cluster.Status::state));
  }

  @Test
  @Order(1)
  void shouldRunEveryProcessAliveWithItsRole() throws Exception {
    List<Cluster.Status> status = Cluster.status(dir);

    assertThat(status).extracting(Cluster.Status::name).containsExactly("broker-1", "broker-2", "broker-3", "planner-1", "planner-2",
        "gateway-1", "gateway-2", "host-1-worker", "host-1-profiler", "host-2-worker", "host-2-profiler");
    assertThat(status).extracting(Cluster.Status::state).containsOnly("running");
    Map<String, Cluster.Status> byName = status.stream().collect(Collectors.toMap(Cluster.Status::name, Function.identity()));
    assertThat(byName.get("broker-2").role()).isEqualTo(Role.BROKER);
    assertThat(byName.get("planner-1").role()).isEqualTo(Role.PLANNER);
    assertThat(byName.get("gateway-2").role()).isEqualTo(Role.GATEWAY);
    assertThat(byName.get("host-1-worker").role()).isEqualTo(Role.WORKER);
    assertThat(byName.get("host-2-profiler").role()).isEqualTo(Role.PROFILER);
    assertThat(byName.get("host-2-profiler").hostId()).isEqualTo("host-2");
    for (Cluster.Status s : status) {
      // The system's own view: the pid is a java process running that command of the launcher.
      String cmdline = Files.readString(Path.of("/proc", Long.toString(s.pid()), "cmdline")).replace('\0', ' ');
      assertThat(cmdline).as(s.name()).contains(names.mark(), "io.partita.launcher.Partita " + s.role().command() + " ");
    }
    assertThat(up.lines()).contains("host=host-1 cpus=0.6 addr=" + state().group("host-1").orElseThrow().address(),
        "host=host-2 cpus=0.2 addr=" + state().group("host-2").orElseThrow().address());
    assertThat(up.firstAnswer()).isPositive().isLessThanOrEqualTo(up.ready());
  }

  @Test
  @Order(2)
  void shouldAnswerOnEveryPrintedAddress() throws Exception {
    List<String> gateways = up.lines().stream().filter(l -> l.startsWith("gateway=")).map(l -> l.substring(8)).toList();
    List<String> grpc = up.lines().stream().filter(l -> l.startsWith("grpc=")).map(l -> l.substring(5)).toList();
    String bootstrap = up.lines().stream().filter(l -> l.startsWith("bootstrap=")).map(l -> l.substring(10)).findFirst().orElseThrow();

    assertThat(gateways).hasSize(2).allMatch(g -> g.matches("http://198\\.1[89]\\.\\d+\\.\\d+:8080"));
    for (String gateway : gateways) {
      HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create(gateway + "/v2/health/ready")).timeout(Duration.ofSeconds(10))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(ready.statusCode()).as("%s/v2/health/ready: %s", gateway, ready.body()).isEqualTo(200);
      // Right after up, the plan may still be moving demo-mlp's request partitions between the hosts: a
      // call that lands on a worker no longer running it is told so as NOT_READY (503, retriable), never 404.
      HttpRequest call = HttpRequest.newBuilder(URI.create(gateway + "/v2/models/demo-a/infer"))
          .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(
              "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}")).build();
      List<HttpResponse<String>> last = new ArrayList<>(List.of(http.send(call, HttpResponse.BodyHandlers.ofString())));
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
        if (last.get(0).statusCode() != 503) {
          return true;
        }
        last.set(0, http.send(call, HttpResponse.BodyHandlers.ofString()));
        return last.get(0).statusCode() != 503;
      });
      HttpResponse<String> infer = last.get(0);
      assertThat(infer.statusCode()).as("%s infer: %s", gateway, infer.body()).isEqualTo(200);
      assertThat(infer.body()).contains("\"model_name\":\"demo-a\"", "\"shape\":[1,4]");
    }
    for (String address : grpc) {
      int colon = address.lastIndexOf(':');
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))), 3000);
      }
    }
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(p)) {
      assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(3);
    }
    for (GroupRecord host : state().groups(GroupKind.HOST)) {
      // Nothing listens on a worker host; a refused connection (not a time-out) shows the address is there.
      assertThat(answers(host.address(), 9)).as("%s at %s answers", host.name(), host.address()).isTrue();
    }
  }

  private static boolean answers(String address, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(address, port), 3000);
      return true;
    } catch (ConnectException e) {
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  @Order(3)
  void shouldGiveEachGroupItsNamespaceCgroupsAndQuota() throws Exception {
    ClusterState state = state();
    String namespaces = ClusterMachine.run("ip", "netns", "list");

    for (GroupRecord g : state.groups()) {
      assertThat(namespaces).contains(names.namespace(g.name()));
      assertThat(ClusterMachine.run("ip", "-n", names.namespace(g.name()), "-o", "-4", "addr", "show", "dev", "eth0"))
          .contains("inet " + g.address() + "/24");
      Path cpu = ClusterMachine.CGROUPS.resolve("cpu").resolve(names.cgroup(g.name()));
      Path cpuset = ClusterMachine.CGROUPS.resolve("cpuset").resolve(names.cgroup(g.name()));
      String quota = ClusterMachine.read(cpu.resolve("cpu.cfs_quota_us"));
      switch (g.name()) {
        case "host-1" -> assertThat(quota).isEqualTo("6000");
        case "host-2" -> assertThat(quota).isEqualTo("2000");
        default -> assertThat(quota).as(g.name()).isEqualTo("-1");
      }
      if (g.kind() == GroupKind.HOST) {
        assertThat(ClusterMachine.read(cpu.resolve("cpu.cfs_period_us"))).isEqualTo("10000");
      }
      assertThat(ClusterMachine.read(cpuset.resolve("cpuset.cpus"))).as(g.name())
          .isEqualTo(g.kind() == GroupKind.HOST ? "1" : "0");
      for (ProcessRecord p : state.processesOf(g.name())) {
        String cgroups = Files.readString(Path.of("/proc", Long.toString(p.pid()), "cgroup"));
        assertThat(cgroups).as(p.name()).contains(":cpu:/" + names.cgroup(g.name()) + "\n", ":cpuset:/" + names.cgroup(g.name()) + "\n",
            ":freezer:/" + names.cgroup(g.name()) + "\n");
        assertThat(ClusterMachine.run("ip", "netns", "identify", Long.toString(p.pid())).strip()).as(p.name())
            .isEqualTo(names.namespace(g.name()));
      }
    }
  }

  @Test
  @Order(4)
  void shouldShowAKilledHostExitedAndRunningAgainOnceStarted() throws Exception {
    List<Long> before = state().processesOf("host-2").stream().map(ProcessRecord::pid).toList();
    try {
      String killed = Cluster.fault(dir, Cluster.Fault.KILL, "host-2", null);

      assertThat(killed).startsWith("host-2: killed (SIGKILL)");
      assertThat(statusStates()).containsEntry("host-2-worker", "exited").containsEntry("host-2-profiler", "exited")
          .containsEntry("host-1-worker", "running");
      for (long pid : before) {
        assertThat(ClusterMachine.running(pid)).as("pid %d", pid).isFalse();
      }
    } finally {
      Cluster.fault(dir, Cluster.Fault.START, "host-2", null);
    }

    assertThat(statusStates()).containsEntry("host-2-worker", "running").containsEntry("host-2-profiler", "running");
    assertThat(state().processesOf("host-2")).extracting(ProcessRecord::pid).doesNotContainAnyElementsOf(before);
  }

  @Test
  @Order(5)
  void shouldShowAPausedHostUntilItIsResumed() throws Exception {
    long worker = state().processesOf("host-1").get(0).pid();
    try {
      Cluster.fault(dir, Cluster.Fault.PAUSE, "host-1", null);

      assertThat(statusStates()).containsEntry("host-1-worker", "paused").containsEntry("host-1-profiler", "paused")
          .containsEntry("gateway-1", "running");
      assertThat(ClusterMachine.read(ClusterMachine.CGROUPS.resolve("freezer").resolve(names.cgroup("host-1")).resolve("freezer.state")))
          .isEqualTo("FROZEN");
    } finally {
      Cluster.fault(dir, Cluster.Fault.RESUME, "host-1", null);
    }

    assertThat(statusStates()).containsEntry("host-1-worker", "running").containsEntry("host-1-profiler", "running");
    assertThat(state().processesOf("host-1").get(0).pid()).isEqualTo(worker);
  }

  @Test
  @Order(6)
  void shouldCutAGatewayOffAndHealIt() throws Exception {
    GroupRecord gateway = state().group("gateway-2").orElseThrow();
    URI ready = URI.create("http://" + gateway.address() + ":" + gateway.port("http") + "/v2/health/ready");
    try {
      Cluster.fault(dir, Cluster.Fault.PARTITION, "gateway-2", null);

      assertThat(statusStates()).containsEntry("gateway-2", "cut").containsEntry("gateway-1", "running");
      assertThat(answers(gateway.address(), gateway.port("http"))).as("a cut gateway does not answer").isFalse();
    } finally {
      Cluster.fault(dir, Cluster.Fault.HEAL, "gateway-2", null);
    }

    assertThat(statusStates()).containsEntry("gateway-2", "running");
    Awaitility.await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() ->
        assertThat(http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString())
            .statusCode()).isEqualTo(200));
  }

  @Test
  @Order(7)
  void shouldSlowAHostAndRestoreItsQuota() throws Exception {
    Path quota = ClusterMachine.CGROUPS.resolve("cpu").resolve(names.cgroup("host-1")).resolve("cpu.cfs_quota_us");
    try {
      Cluster.fault(dir, Cluster.Fault.SLOW, "host-1", 0.1);

      assertThat(statusStates()).containsEntry("host-1-worker", "slow 0.1");
      assertThat(ClusterMachine.read(quota)).isEqualTo("1000");
    } finally {
      Cluster.fault(dir, Cluster.Fault.RESTORE, "host-1", null);
    }

    assertThat(statusStates()).containsEntry("host-1-worker", "running");
    assertThat(ClusterMachine.read(quota)).isEqualTo("6000");
  }

  @Test
  @Order(8)
  void shouldAddANewWorkerHostOnlyWhenItsQuotaFits() throws Exception {
    assertThatThrownBy(() -> Cluster.fault(dir, Cluster.Fault.START, "host-3", 0.4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--cpus: host-3 needs 0.4 of a core, but the CPUs for worker hosts (CPU 1) have 0.2 left"
            + " (CPU 0 runs brokers, planners and gateways); lower the quotas");
    assertThat(state().group("host-3")).isEmpty();

    String added = Cluster.fault(dir, Cluster.Fault.START, "host-3", 0.2);

    assertThat(added).startsWith("host-3: added, 0.2 of CPU 1 at " + state().group("host-3").orElseThrow().address());
    assertThat(statusStates()).containsEntry("host-3-worker", "running").containsEntry("host-3-profiler", "running");
    assertThat(ClusterMachine.read(ClusterMachine.CGROUPS.resolve("cpu").resolve(names.cgroup("host-3")).resolve("cpu.cfs_quota_us")))
        .isEqualTo("2000");
    assertThat(ClusterMachine.run("ip", "netns", "list")).contains(names.namespace("host-3"));
  }
}

package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.bench.FaultSuite;
import io.partita.bench.FaultSuite.Fault;
import io.partita.bench.ManyHosts;
import io.partita.launcher.cluster.ClusterNames;
import io.partita.models.demo.DemoHeavy;
import io.partita.models.demo.DemoMlp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The fault suite ({@link FaultSuite}, what {@code ./partita bench --only faults} tabulates) held
 * to what Partita promises: under each fault, with open-loop load from a Kafka client and over HTTP
 * and gRPC through both gateways, no call is left without an answer, no caller gets an answer twice,
 * a batch job on a killed gateway ends with exactly one result per row, a model added while the
 * active planner dies is still placed, and a paused or cut-off host takes its place back in the
 * plan. 60 s of fault and 60 s after (90 s each for the slowed host), on a cluster of processes
 * with worker hosts at 0.6 and 0.2 of a core. Needs root (CI runs as root); skips, saying why,
 * elsewhere.
 */
@Tag("faults")
@Tag("cluster")
@Tag("slow")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FaultsIT {
  private static Path dir;
  private static ManyHosts cluster;
  private static FaultSuite suite;

  @BeforeAll
  static void startCluster() throws Exception {
    ClusterMachine.assumeNamespacesAndCgroups();
    dir = ClusterMachine.freshDir("faults-it");
    cluster = ManyHosts.up(dir, List.of(0.6, 0.2), null, System.err);
    cluster.awaitMeasuredPlans(cluster.hosts(), List.of(DemoMlp.MODEL_NAME, DemoHeavy.MODEL_NAME), Duration.ofMinutes(8));
    double capacity = cluster.measureCapacity(64, Duration.ofSeconds(10), Duration.ofSeconds(10));
    suite = new FaultSuite(cluster, FaultSuite.Timing.FULL, capacity, "host-2");
  }

  @AfterAll
  static void down() {
    if (cluster != null) {
      ClusterNames names = ClusterNames.of(dir);
      cluster.close();
      assertThat(ClusterMachine.leftovers(names)).as("what the cluster left").isEmpty();
    }
  }

  private static FaultSuite.Result survive(Fault fault) throws Exception {
    FaultSuite.Result r = suite.run(fault);
    System.err.println(fault + ": " + String.join(" | ", FaultSuite.row(r)));
    assertThat(r.calls().lost()).as("%s: calls never answered (errors %s)", fault, r.calls().errors()).isZero();
    assertThat(r.deliveredTwice()).as("%s: answers handed to a caller twice", fault).isZero();
    assertThat(r.calls().ok()).as("%s: OK answers", fault).isPositive();
    return r;
  }

  private static double quota(String host) {
    try {
      return cluster.quota(host);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void backInThePlan(String host) throws Exception {
    cluster.await(host + " back in the plan", Duration.ofMinutes(2),
        s -> s.assignments().values().stream().anyMatch(a -> a.getHost().equals(host)));
  }

  @Test
  @Order(1)
  void shouldAnswerEveryCallWhenAWorkerHostIsKilled() throws Exception {
    survive(Fault.HOST_KILL);
    backInThePlan("host-2");
  }

  @Test
  @Order(2)
  void shouldAnswerEveryCallWhenAWorkerHostIsPausedAndTakeItBack() throws Exception {
    survive(Fault.HOST_PAUSE);
    backInThePlan("host-2");
  }

  @Test
  @Order(3)
  void shouldAnswerEveryCallWhenAWorkerHostIsCutOffAndTakeItBack() throws Exception {
    survive(Fault.HOST_PARTITION);
    backInThePlan("host-2");
  }

  @Test
  @Order(4)
  void shouldAnswerEveryCallWhenAWorkerHostIsSlowedAndGiveItsShareBackAfterTheRestore() throws Exception {
    FaultSuite.Result r = survive(Fault.HOST_SLOW);
    // per mille of the answers the slowed host gave: it loses share while slow (probed now and then),
    // and takes at least half of it back once restored (its cut serving figure comes back). What it
    // had before is the previous fault's aftermath and can overshoot (0.46 with a fifth of a core
    // against 0.6 seen): it is held to half of that or of its share of the hosts' CPU, the lower.
    long before = r.checks().get("sharePerMilleBefore");
    long cpuShare = Math.round(1000 * cluster.quota("host-2") / cluster.hosts().stream().mapToDouble(FaultsIT::quota).sum());
    assertThat(r.checks().get("sharePerMilleLateInFault")).as(r.note()).isLessThan(before);
    assertThat(r.checks().get("sharePerMilleAfter")).as("%s; host-2's share of the CPU %d per mille", r.note(), cpuShare)
        .isGreaterThanOrEqualTo(Math.min(before, cpuShare) / 2);
  }

  @Test
  @Order(5)
  void shouldAnswerEveryCallWhenTheBrokerLeadingTheRequestsIsKilled() throws Exception {
    survive(Fault.BROKER_REQUESTS);
  }

  @Test
  @Order(6)
  void shouldAnswerEveryCallWhenTheBrokerLeadingTheRepliesIsKilled() throws Exception {
    survive(Fault.BROKER_REPLIES);
  }

  @Test
  @Order(7)
  void shouldPlaceAModelAddedWhileTheActivePlannerDies() throws Exception {
    FaultSuite.Result r = survive(Fault.PLANNER_ACTIVE);
    assertThat(r.checks()).as(r.note()).containsEntry("addedModelAnswered", 1L);
  }

  @Test
  @Order(8)
  void shouldFinishABatchJobWithOneResultPerRowWhenItsGatewayIsKilled() throws Exception {
    FaultSuite.Result r = survive(Fault.GATEWAY);
    assertThat(r.checks()).as(r.note()).containsEntry("jobDone", 1L)
        .containsEntry("jobRowsWithOneResult", r.checks().get("jobRows")).containsEntry("jobRowsWithSeveralResults", 0L)
        .containsEntry("jobRowsOk", r.checks().get("jobRows"));
  }
}

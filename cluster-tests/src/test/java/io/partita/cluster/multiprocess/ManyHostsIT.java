package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.partita.avro.HostEnvironment;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.bench.Calls;
import io.partita.bench.FaultSuite;
import io.partita.bench.FaultSuite.Fault;
import io.partita.bench.ManyHosts;
import io.partita.bench.ManyHosts.Snapshot;
import io.partita.bench.OpenLoad;
import io.partita.launcher.cluster.Cluster;
import io.partita.launcher.cluster.ClusterNames;
import io.partita.models.demo.DemoHeavy;
import io.partita.models.demo.DemoMlp;
import io.partita.planner.plan.Plans;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Many hosts for real, started once for the class through the code of {@code partita cluster up}
 * ({@link ManyHosts}): two worker hosts at 60 % and 20 % of a core. Checked from outside: every
 * process of the cluster, plans on both hosts from their own measurements with the slow host
 * measured slower, the version each host runs, each host's share of the answers under open-loop
 * load against its share of the planned capacity, a third host joining under load and leaving with
 * SIGTERM with nothing lost.
 *
 * <p>Then, on the same cluster, the fault suite ({@link FaultSuite}, what {@code ./partita bench
 * --only faults} tabulates) held to what Partita promises: under each fault, with open-loop load
 * from a Kafka client and over HTTP and gRPC through both gateways, no call is left without an
 * answer, no caller gets an answer twice, a batch job on a killed gateway ends with exactly one
 * result per row, a model added while the active planner dies is still placed, and a paused or
 * cut-off host takes its place back in the plan. 60 s of fault and 60 s after (90 s each for the
 * slowed host). The faults come last because they leave the plan in their aftermath; they share the
 * cluster because starting one and waiting for the slow host's own measurements takes 8 to 13
 * minutes on a 2-core machine.
 *
 * <p>Needs root (CI runs as root); skips, saying why, elsewhere.
 */
@Tag("cluster")
@Tag("slow")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ManyHostsIT {
  private static final List<String> MODELS = List.of(DemoMlp.MODEL_NAME, DemoHeavy.MODEL_NAME);
  private static Path dir;
  private static ManyHosts cluster;
  private static List<String> hosts;
  private static Snapshot plan;
  private static FaultSuite suite;

  @BeforeAll
  static void startCluster() throws Exception {
    ClusterMachine.assumeNamespacesAndCgroups();
    dir = ClusterMachine.freshDir("many-hosts-it");
    cluster = ManyHosts.up(dir, List.of(0.6, 0.2), null, System.err);
    hosts = cluster.hosts();
    // 8 minutes was too short once on a slow day (host-2 still profiling); waiting longer costs nothing on a good one.
    plan = cluster.awaitMeasuredPlans(hosts, MODELS, Duration.ofMinutes(12));
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      ClusterNames names = ClusterNames.of(dir);
      cluster.close();
      assertThat(ClusterMachine.leftovers(names)).as("what the cluster left").isEmpty();
    }
  }

  @Test
  @Order(1)
  void shouldRunEveryProcessOfTheCluster() throws Exception {
    Map<String, Long> running = Cluster.status(dir).stream().filter(s -> s.state().equals("running"))
        .collect(Collectors.groupingBy(s -> s.role().toString(), Collectors.counting()));
    assertThat(running).containsEntry("broker", 3L).containsEntry("planner", 2L).containsEntry("gateway", 2L)
        .containsEntry("worker", 2L).containsEntry("profiler", 2L);
    assertThat(hosts).containsExactly("host-1", "host-2");
  }

  @Test
  @Order(2)
  void shouldPlanBothHostsFromTheirOwnMeasurementsWithTheSlowHostSlower() {
    for (String host : hosts) {
      for (String model : MODELS) {
        assertThat(plan.measured(model, host)).as("%s on %s rests on its own timings", model, host).isTrue();
      }
    }
    HostEnvironment slow = plan.hosts().get("host-2");
    assertThat(slow.getCpuQuotaCores()).as("host-2's quota, as its profiler found it").isCloseTo(0.2, within(1e-9));
    assertThat(plan.hosts().get("host-1").getCpuQuotaCores()).isCloseTo(0.6, within(1e-9));
    // demo-heavy version 2 runs on both hosts (version 1 at least where it fits): compare like with like
    TimingEvent fast = plan.timings().get(String.join("/", DemoHeavy.MODEL_NAME, "2", "host-1", "1", "1", "CPU"));
    TimingEvent slowEvent = plan.timings().get(String.join("/", DemoHeavy.MODEL_NAME, "2", "host-2", "1", "1", "CPU"));
    assertThat(fast).isNotNull();
    assertThat(slowEvent).isNotNull();
    assertThat(Plans.batchTimeMs(slowEvent, slow)).as("the time host-2 is planned by, against host-1's")
        .isGreaterThan(Plans.batchTimeMs(fast, plan.hosts().get("host-1")));
    // Capacities of the load model, whose two versions cost about the same: demo-heavy's hosts may run
    // different versions (the fast host the accurate, heavier one), which are not alike.
    assertThat(plan.capacity("host-2", ManyHosts.LOAD_MODEL)).as("host-2's planned capacity of %s against host-1's",
        ManyHosts.LOAD_MODEL).isLessThan(plan.capacity("host-1", ManyHosts.LOAD_MODEL));
  }

  @Test
  @Order(3)
  void shouldChooseEachHostsVersionByTheLatencyObjective() {
    // demo-heavy asks for the most accurate version within its latency objective. Each host's choice
    // follows the rule on the latency the planner has for version 1 there (its own measurement, one
    // predicted from a similar host, or none when no median of it settled anywhere): version 1 where
    // it is known and within the objective, version 2 elsewhere; and the host at a fifth of a core
    // never holds version 1 within it.
    for (String host : hosts) {
      VersionChoice choice = plan.version(DemoHeavy.MODEL_NAME, host);
      VersionCandidate v1 = choice.getCandidates().stream()
          .filter(c -> c.getVersion().equals(DemoHeavy.VERSION_WIDE)).findFirst().orElse(null);
      assertThat(v1).as("%s: version 1 among the candidates %s", host, choice.getCandidates()).isNotNull();
      assertThat(choice.getChosenVersion()).as("%s: version 1 observed at %s ms against %s ms; candidates %s", host,
          v1.getLatencyMs(), choice.getLatencyObjectiveMs(), choice.getCandidates())
          .isEqualTo(v1.getLatencyMs() != null && v1.getLatencyMs() <= choice.getLatencyObjectiveMs() ? DemoHeavy.VERSION_WIDE : DemoHeavy.VERSION_PRUNED);
    }
    assertThat(plan.version(DemoHeavy.MODEL_NAME, "host-2").getChosenVersion()).isEqualTo(DemoHeavy.VERSION_PRUNED);
    VersionCandidate slowV1 = plan.version(DemoHeavy.MODEL_NAME, "host-2").getCandidates().stream()
        .filter(c -> c.getVersion().equals(DemoHeavy.VERSION_WIDE)).findFirst().orElseThrow();
    if (slowV1.getLatencyMs() != null) {
      assertThat(slowV1.getReason()).as("host-2's version 1").contains("exceeds the objective");
    }
  }

  /**
   * The fast host takes the accurate version where its batch-1 time, as the planner reads it under
   * the host's CPU quota, meets the objective. Under a quota the per-run times split into two modes
   * and the median may never settle; the profiler then calls a point stable once its rate has
   * settled, which is the figure the planner plans such a host by. A point that did not settle at
   * first (the host's worker starting in the same quota) is measured once more after the others.
   */
  @Test
  @Order(4)
  void shouldRunTheAccurateVersionWhereItsBatchOneTimeMeetsTheObjective() {
    for (String host : hosts) {
      VersionChoice choice = plan.version(DemoHeavy.MODEL_NAME, host);
      TimingEvent v1 = plan.timings().get(String.join("/", DemoHeavy.MODEL_NAME, DemoHeavy.VERSION_WIDE, host, "1", "1", "CPU"));
      assertThat(v1).as("version 1 measured on %s", host).isNotNull();
      double planned = Plans.batchTimeMs(v1, plan.hosts().get(host));
      if (planned <= choice.getLatencyObjectiveMs()) {
        assertThat(v1.getStable()).as("version 1's batch-1 point on %s, which meets the objective, settled (by its"
            + " median or, under the host's quota, its rate): %s", host, v1).isTrue();
      }
      assertThat(choice.getChosenVersion()).as("%s: version 1 planned at %.2f ms against %s ms; candidates %s", host, planned,
          choice.getLatencyObjectiveMs(), choice.getCandidates())
          .isEqualTo(planned <= choice.getLatencyObjectiveMs() ? DemoHeavy.VERSION_WIDE : DemoHeavy.VERSION_PRUNED);
    }
  }

  /**
   * Each host's share of the answers against its share of the planned capacity, as the plan stood
   * while the load ran (read as it starts and every 10 s while it runs): serving evidence moves the
   * capacities under load, and the workers share the request partitions by the plan of the moment.
   */
  @Test
  @Order(5)
  void shouldShareTheAnswersByCapacityUnderOpenLoopLoad() throws Exception {
    double capacity = cluster.measureCapacity(64, Duration.ofSeconds(10), Duration.ofSeconds(10));
    ManyHosts.SharedLoad load = cluster.openLoadUnderThePlan(0.8 * capacity, Duration.ofSeconds(30), Duration.ofSeconds(30));
    Calls calls = load.calls();

    assertThat(calls.lost()).as("calls never answered").isZero();
    assertThat(calls.errors()).as("error answers").isEmpty();
    for (String host : hosts) {
      double expected = load.capacityShare().get(host);
      assertThat(calls.share(host)).as("%s's share of the answers (capacity share %.2f, read as %s; by host %s)", host,
          expected, load.readings(), calls.okByHost()).isCloseTo(expected, within(0.15));
    }
  }

  @Test
  @Order(6)
  void shouldTakeAJoiningHostIntoThePlanAndServeFromIt() throws Exception {
    long started = System.nanoTime();
    cluster.fault(Cluster.Fault.START, "host-3", 0.2);
    cluster.await("host-3 in the plan with a slot of " + ManyHosts.LOAD_MODEL, Duration.ofMinutes(3),
        s -> s.assignments().values().stream().anyMatch(a -> a.getHost().equals("host-3") && a.getModel().equals(ManyHosts.LOAD_MODEL)));
    System.err.printf("host-3 in the plan %.1f s after it was started%n", (System.nanoTime() - started) / 1e9);
    Calls calls = OpenLoad.run(cluster.demoCallers(), 100, Duration.ofSeconds(20), Duration.ofSeconds(30), null);
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (calls.okByHost().getOrDefault("host-3", 0L) == 0 && System.nanoTime() < deadline) {
      calls = OpenLoad.run(cluster.demoCallers(), 100, Duration.ofSeconds(20), Duration.ofSeconds(30), null);
    }
    assertThat(calls.okByHost()).as("answers by host once host-3 joined").containsKey("host-3");
    assertThat(calls.lost()).isZero();
  }

  @Test
  @Order(7)
  void shouldLoseNothingWhenAHostLeavesWithSigterm() throws Exception {
    CompletableFuture<String> stopped = new CompletableFuture<>();
    Calls calls = OpenLoad.run(cluster.demoCallers(), 100, Duration.ofSeconds(30), Duration.ofSeconds(30), second -> {
      if (second == 10) {
        CompletableFuture.runAsync(() -> {
          try {
            stopped.complete(cluster.fault(Cluster.Fault.STOP, "host-3", null));
          } catch (Exception e) {
            stopped.completeExceptionally(e);
          }
        });
      }
    });
    stopped.get();

    assertThat(calls.lost()).as("calls never answered while host-3 left").isZero();
    assertThat(calls.errors()).as("error answers while host-3 left").isEmpty();
    cluster.await("host-3's slots withdrawn from the plan", Duration.ofMinutes(2),
        s -> s.assignments().values().stream().noneMatch(a -> a.getHost().equals("host-3")));
  }

  // --- The fault suite, on the same cluster once the checks above are done -------------------

  /** The suite, at the load share of the capacity measured once the third host has left. */
  private static synchronized FaultSuite faultSuite() throws InterruptedException {
    if (suite == null) {
      double capacity = cluster.measureCapacity(64, Duration.ofSeconds(10), Duration.ofSeconds(10));
      suite = new FaultSuite(cluster, FaultSuite.Timing.FULL, capacity, "host-2");
    }
    return suite;
  }

  private static FaultSuite.Result survive(Fault fault) throws Exception {
    FaultSuite.Result r = faultSuite().run(fault);
    System.err.println(fault + ": " + String.join(" | ", FaultSuite.row(r)));
    assertThat(r.calls().lost()).as("%s: calls never answered (errors %s)", fault, r.calls().errors()).isZero();
    assertThat(r.deliveredTwice()).as("%s: answers handed to a caller twice", fault).isZero();
    assertThat(r.calls().ok()).as("%s: OK answers", fault).isPositive();
    return r;
  }

  private static void backInThePlan(String host) throws Exception {
    cluster.await(host + " back in the plan", Duration.ofMinutes(2),
        s -> s.assignments().values().stream().anyMatch(a -> a.getHost().equals(host)));
  }

  @Test
  @Tag("faults")
  @Order(11)
  void shouldAnswerEveryCallWhenAWorkerHostIsKilled() throws Exception {
    survive(Fault.HOST_KILL);
    backInThePlan("host-2");
  }

  @Test
  @Tag("faults")
  @Order(12)
  void shouldAnswerEveryCallWhenAWorkerHostIsPausedAndTakeItBack() throws Exception {
    survive(Fault.HOST_PAUSE);
    backInThePlan("host-2");
  }

  @Test
  @Tag("faults")
  @Order(13)
  void shouldAnswerEveryCallWhenAWorkerHostIsCutOffAndTakeItBack() throws Exception {
    survive(Fault.HOST_PARTITION);
    backInThePlan("host-2");
  }

  @Test
  @Tag("faults")
  @Order(14)
  void shouldAnswerEveryCallWhenAWorkerHostIsSlowedAndGiveItsShareBackAfterTheRestore() throws Exception {
    FaultSuite.Result r = survive(Fault.HOST_SLOW);
    // per mille of the answers the slowed host gave: it loses share while slow (probed now and then),
    // and takes at least half of it back once restored (its cut serving figure comes back). What it
    // had before is the previous fault's aftermath and can overshoot (0.46 with a fifth of a core
    // against 0.6 seen): it is held to half of that or of its share of the hosts' CPU, the lower.
    // The hosts are the two of the start: host-3 joined and left before the faults.
    long before = r.checks().get("sharePerMilleBefore");
    double hostsCpu = 0;
    for (String host : hosts) {
      hostsCpu += cluster.quota(host);
    }
    long cpuShare = Math.round(1000 * cluster.quota("host-2") / hostsCpu);
    assertThat(r.checks().get("sharePerMilleLateInFault")).as(r.note()).isLessThan(before);
    assertThat(r.checks().get("sharePerMilleAfter")).as("%s; host-2's share of the CPU %d per mille", r.note(), cpuShare)
        .isGreaterThanOrEqualTo(Math.min(before, cpuShare) / 2);
  }

  @Test
  @Tag("faults")
  @Order(15)
  void shouldAnswerEveryCallWhenTheBrokerLeadingTheRequestsIsKilled() throws Exception {
    survive(Fault.BROKER_REQUESTS);
  }

  @Test
  @Tag("faults")
  @Order(16)
  void shouldAnswerEveryCallWhenTheBrokerLeadingTheRepliesIsKilled() throws Exception {
    survive(Fault.BROKER_REPLIES);
  }

  @Test
  @Tag("faults")
  @Order(17)
  void shouldPlaceAModelAddedWhileTheActivePlannerDies() throws Exception {
    FaultSuite.Result r = survive(Fault.PLANNER_ACTIVE);
    assertThat(r.checks()).as(r.note()).containsEntry("addedModelAnswered", 1L);
  }

  @Test
  @Tag("faults")
  @Order(18)
  void shouldFinishABatchJobWithOneResultPerRowWhenItsGatewayIsKilled() throws Exception {
    FaultSuite.Result r = survive(Fault.GATEWAY);
    assertThat(r.checks()).as(r.note()).containsEntry("jobDone", 1L)
        .containsEntry("jobRowsWithOneResult", r.checks().get("jobRows")).containsEntry("jobRowsWithSeveralResults", 0L)
        .containsEntry("jobRowsOk", r.checks().get("jobRows"));
  }
}

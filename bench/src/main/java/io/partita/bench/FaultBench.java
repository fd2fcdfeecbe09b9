package io.partita.bench;

import io.partita.bench.FaultSuite.Fault;
import io.partita.models.demo.DemoHeavy;
import io.partita.models.demo.DemoMlp;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Section 7 of BENCHMARKS.md, "Faults survived": every fault of {@link FaultSuite} on a cluster of
 * processes with two worker hosts, one table row each; and, alone ({@code --only soak}), a soak
 * with a fault drawn at random every two minutes.
 */
final class FaultBench {
  private final Report report;
  private final Path workDir;
  private final boolean quick;
  private final String self;

  FaultBench(Report report, Path workDir, boolean quick, String self) {
    this.report = report;
    this.workDir = workDir;
    this.quick = quick;
    this.self = self;
  }

  private FaultSuite.Timing timing() {
    return quick ? new FaultSuite.Timing(Duration.ofSeconds(10), Duration.ofSeconds(20), Duration.ofSeconds(20), 0.4)
        : FaultSuite.Timing.FULL;
  }

  void faults() throws Exception {
    if (!"root".equals(System.getProperty("user.name"))) {
      report.note("faults skipped", "the cluster's faults need root (sudo ./partita bench --only faults)");
      return;
    }
    FaultSuite.Timing timing = timing();
    List<List<String>> rows = new ArrayList<>();
    double capacity;
    try (ManyHosts cluster = ManyHosts.up(workDir.resolve("faults"), List.of(0.6, 0.2), null, System.err)) {
      cluster.awaitMeasuredPlans(cluster.hosts(), List.of(DemoMlp.MODEL_NAME, DemoHeavy.MODEL_NAME), Duration.ofMinutes(10));
      capacity = cluster.measureCapacity(64, Duration.ofSeconds(15), Duration.ofSeconds(20));
      FaultSuite suite = new FaultSuite(cluster, timing, capacity, "host-2");
      // -Dpartita.bench.faults=HOST_SLOW,GATEWAY runs those alone (to look at one fault again)
      List<Fault> faults = System.getProperty("partita.bench.faults") == null ? List.of(Fault.values())
          : Arrays.stream(System.getProperty("partita.bench.faults").split(",")).map(String::strip).map(Fault::valueOf).toList();
      for (Fault fault : faults) {
        System.err.println("Fault: " + fault.what());
        FaultSuite.Result r = suite.run(fault);
        rows.add(FaultSuite.row(r));
        System.err.println(String.join(" | ", FaultSuite.row(r)));
      }
    }
    report.add(new Report.Table("7. Faults survived",
        "A cluster of processes on this machine (3 brokers, 2 planners, 2 gateways, worker hosts at 0.6 and 0.2 of a core);"
            + " open-loop load at " + Report.fmt(timing.loadShare()) + " of the measured capacity (" + Report.fmt(capacity)
            + " calls/s with 64 in flight) on the demo model, a third each from a Kafka client, HTTP and gRPC (both"
            + " gateways; a call whose gateway is unreachable goes to the other). Each fault: " + timing.before().toSeconds()
            + " s before, " + timing.fault().toSeconds() + " s of fault, " + timing.after().toSeconds() + " s after (at least "
            + FaultSuite.SLOW_PHASE.toSeconds() + " s each for the slowed host, whose share is read from "
            + FaultSuite.SLOW_SHARE_FROM.toSeconds() + " s into the fault and after the restore); host"
            + " faults hit host-2. 'lost' are calls never answered, not even with an error (a minute of grace after the"
            + " load). 'reply duplicates' are replies written twice for one request on the reply topics; 'duplicates to"
            + " callers' are answers the Kafka client handed a caller twice (with the duplicates it dropped). Latencies are"
            + " of OK answers sent in the window.",
        FaultSuite.COLUMNS, rows, self));
  }

  void soak() throws Exception {
    if (!"root".equals(System.getProperty("user.name"))) {
      report.note("soak skipped", "the cluster's faults need root (sudo ./partita bench --only soak)");
      return;
    }
    Duration length = quick ? Duration.ofMinutes(5) : Duration.ofMinutes(30);
    long seed = System.nanoTime();
    List<String> drawn = new ArrayList<>();
    FaultSuite.SoakResult result;
    double capacity;
    try (ManyHosts cluster = ManyHosts.up(workDir.resolve("soak"), List.of(0.6, 0.2), null, System.err)) {
      cluster.awaitMeasuredPlans(cluster.hosts(), List.of(DemoMlp.MODEL_NAME, DemoHeavy.MODEL_NAME), Duration.ofMinutes(10));
      capacity = cluster.measureCapacity(64, Duration.ofSeconds(15), Duration.ofSeconds(20));
      FaultSuite suite = new FaultSuite(cluster, new FaultSuite.Timing(Duration.ZERO, Duration.ZERO, Duration.ZERO, 0.6), capacity,
          "host-2");
      result = suite.soak(length, seed, (second, fault) -> {
        drawn.add(second + " s: " + fault.name().toLowerCase(Locale.ROOT));
        System.err.println("Soak: " + second + " s, " + fault.what());
      });
    }
    Calls calls = result.calls();
    report.add(new Report.Table("7b. Soak",
        length.toMinutes() + " minutes at 0.6 of the measured capacity (" + Report.fmt(capacity) + " calls/s) with a fault drawn"
            + " at random every 2 minutes (seed " + seed + "): " + String.join(", ", drawn),
        List.of("sent", "OK", "errors by code", "lost", "reply duplicates", "duplicates to callers",
            "retried on the other gateway", "p50 ms", "p99 ms"),
        List.of(List.of(Long.toString(calls.sent()), Long.toString(calls.ok()), calls.errors().toString(), Long.toString(calls.lost()),
            Long.toString(result.replyDuplicates()), result.deliveredTwice() + " (" + result.clientDuplicatesDropped() + " dropped)",
            Long.toString(result.retriedOnOtherGateway()),
            Report.fmt(calls.okLatencyMs(50, 0, length.toSeconds())), Report.fmt(calls.okLatencyMs(99, 0, length.toSeconds())))),
        self));
  }
}

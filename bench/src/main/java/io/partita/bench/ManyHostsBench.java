package io.partita.bench;

import io.partita.avro.PartitionPlan;
import io.partita.avro.SlotAssignment;
import io.partita.avro.Tensor;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionCandidate;
import io.partita.avro.VersionChoice;
import io.partita.bench.ManyHosts.Snapshot;
import io.partita.client.PartitaClient;
import io.partita.gateway.infer.AnsweredBy;
import io.partita.launcher.cluster.Cluster;
import io.partita.launcher.cluster.EnvFile;
import io.partita.models.demo.DemoHeavy;
import io.partita.models.demo.DemoMlp;
import io.partita.planner.plan.Plans;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Section 6 of BENCHMARKS.md, "Many hosts": a real cluster of processes on this machine ({@link
 * ManyHosts}), two worker hosts at 60 % and 20 % of a core, and what the planning methods and the
 * load sharing do across them: the timing matrix per host, the plan and the version each host
 * runs, each host's share of the answers under open-loop load against its capacity share (and
 * against a second cluster whose workers share the partitions evenly), a third host joining under
 * load and leaving with SIGTERM.
 */
final class ManyHostsBench {
  private static final List<String> MODELS = List.of(DemoMlp.MODEL_NAME, DemoHeavy.MODEL_NAME);
  /** The model of the join's load (6e): its calls cost the hosts, not the brokers, most. */
  private static final String JOIN_MODEL = DemoHeavy.MODEL_NAME;
  private static final List<Double> CPUS = List.of(0.6, 0.2);

  private final Report report;
  private final Path workDir;
  private final boolean quick;
  private final String self;

  ManyHostsBench(Report report, Path workDir, boolean quick, String self) {
    this.report = report;
    this.workDir = workDir;
    this.quick = quick;
    this.self = self;
  }

  /** The shares of one open-loop run, with the capacity it was sized by. */
  record Shares(String assignment, double capacity, double rate, Calls calls, Map<String, Double> capacityShare) {}

  void run() throws Exception {
    if (!"root".equals(System.getProperty("user.name"))) {
      report.note("many hosts skipped", "the hosts' CPU quotas and network namespaces need root (sudo ./partita bench --only hosts)");
      return;
    }
    Duration load = quick ? Duration.ofSeconds(15) : Duration.ofSeconds(60);
    Shares byCapacity;
    try (ManyHosts cluster = ManyHosts.up(workDir.resolve("hosts-capacity"), CPUS, null, System.err)) {
      List<String> hosts = cluster.hosts();
      Snapshot plan = cluster.awaitMeasuredPlans(hosts, MODELS, Duration.ofMinutes(10));
      timingMatrix(plan, hosts);
      thePlan(plan, hosts);
      versions(plan, hosts);
      byCapacity = shares(cluster, "capacity", load);
      joinAndLeave(cluster, load);
    }
    Path even = workDir.resolve("even.env");
    Files.createDirectories(workDir);
    try (var shared = ManyHostsBench.class.getResourceAsStream(EnvFile.SHARED_RESOURCE)) {
      Files.writeString(even, new String(shared.readAllBytes(), StandardCharsets.UTF_8)
          + "\n# the comparison row: partitions shared evenly, whatever each host can do\nPARTITA_WORKER_ASSIGNMENT=even\n");
    }
    Shares evenly;
    try (ManyHosts cluster = ManyHosts.up(workDir.resolve("hosts-even"), CPUS, even, System.err)) {
      cluster.awaitMeasuredPlans(cluster.hosts(), MODELS, Duration.ofMinutes(10));
      evenly = shares(cluster, "even", load);
    }
    sharesTable(List.of(byCapacity, evenly), load);
  }

  private void timingMatrix(Snapshot s, List<String> hosts) {
    List<List<String>> rows = new ArrayList<>();
    for (String model : MODELS) {
      for (String version : versionsOf(s, model)) {
        List<String> row = new ArrayList<>(List.of(model + " v" + version));
        double[] times = new double[hosts.size()];
        for (int i = 0; i < hosts.size(); i++) {
          TimingEvent e = s.timings().get(String.join("/", model, version, hosts.get(i), "1", "1", "CPU"));
          times[i] = e == null ? Double.NaN : Plans.batchTimeMs(e, s.hosts().get(hosts.get(i)));
          row.add(e == null ? "n/a" : Report.fmt(e.getP50Ms()) + " / " + Report.fmt(times[i]));
        }
        row.add(Report.fmt(times[times.length - 1] / times[0]));
        rows.add(row);
      }
    }
    List<String> columns = new ArrayList<>(List.of("model, version"));
    hosts.forEach(h -> columns.add(h + " (" + quota(s, h) + "): p50 / planned ms"));
    columns.add(hosts.get(hosts.size() - 1) + " / " + hosts.get(0));
    report.add(new Report.Table("6a. Many hosts: the timing matrix per host",
        "One core, batch 1, as each host's profiler measured it beside its worker. p50 is the median run; 'planned' is the"
            + " time the planner plans by (Plans.batchTimeMs): under a CPU quota a short run is timed at full speed inside"
            + " the slice each 10 ms period grants, so the median hides the quota and the planned time stretches it.",
        columns, rows, self));
  }

  private static String quota(Snapshot s, String host) {
    var env = s.hosts().get(host);
    return env == null || env.getCpuQuotaCores() == null ? "no quota" : Report.fmt(env.getCpuQuotaCores()) + " cores";
  }

  private static List<String> versionsOf(Snapshot s, String model) {
    return s.timings().values().stream().filter(e -> e.getModel().equals(model)).map(TimingEvent::getVersion)
        .distinct().sorted().toList();
  }

  private void thePlan(Snapshot s, List<String> hosts) {
    List<List<String>> rows = new ArrayList<>();
    for (SlotAssignment a : s.assignments().values()) {
      if (!hosts.contains(a.getHost())) {
        continue;
      }
      PartitionPlan p = s.partitions().get(a.getModel() + "/" + a.getVersion() + "/" + a.getHost() + "/" + a.getPool());
      rows.add(List.of(a.getHost(), a.getSlot(), a.getModel() + " v" + a.getVersion(), a.getCpus().toString(),
          Report.fmt(a.getCapacity()), p == null ? "" : p.getBasis() + (p.getWhy() == null ? "" : ": " + p.getWhy())));
    }
    report.add(new Report.Table("6b. Many hosts: the plan",
        "Every slot the planner assigned, with the capacity it expects of it (items/s), which the workers share the"
            + " request partitions by.", List.of("host", "slot", "runs", "CPUs", "capacity/s", "basis"), rows, self));
  }

  private void versions(Snapshot s, List<String> hosts) {
    List<List<String>> rows = new ArrayList<>();
    for (String model : MODELS) {
      for (String host : hosts) {
        VersionChoice v = s.version(model, host);
        if (v == null) {
          continue;
        }
        VersionCandidate chosen = v.getCandidates().stream().filter(c -> c.getVersion().equals(v.getChosenVersion()))
            .findFirst().orElse(null);
        rows.add(List.of(model, host, String.valueOf(v.getChosenVersion()), String.valueOf(v.getObjective()),
            v.getLatencyObjectiveMs() == null ? "none" : Report.fmt(v.getLatencyObjectiveMs()) + " ms",
            chosen == null ? String.valueOf(v.getNoChoiceReason()) : String.valueOf(chosen.getReason())));
      }
    }
    Map<String, String> heavy = new TreeMap<>();
    for (String host : hosts) {
      VersionChoice v = s.version(DemoHeavy.MODEL_NAME, host);
      heavy.put(host, v == null ? "none" : String.valueOf(v.getChosenVersion()));
    }
    String outcome = new HashSet<>(heavy.values()).size() > 1
        ? "In this run the hosts differ: " + heavy + "."
        : "In this run every host runs the same version of demo-heavy (" + heavy + "): see the reasons.";
    report.add(new Report.Table("6c. Many hosts: the version each host runs",
        "demo-heavy asks for the most accurate version within its latency objective (objective accuracy), so a host"
            + " that cannot hold version 1 within it runs version 2. " + outcome
            + " demo-mlp keeps the default objective (fastest).",
        List.of("model", "host", "chosen", "objective", "latency objective", "why"), rows, self));
  }

  /**
   * Measures the cluster's capacity for the demo model (calls kept in flight from the Kafka
   * client), then runs open-loop load at 80 % of it from the Kafka client and both gateways.
   */
  private Shares shares(ManyHosts cluster, String assignment, Duration load) throws Exception {
    double capacity = cluster.measureCapacity(64, Duration.ofSeconds(quick ? 5 : 15), Duration.ofSeconds(quick ? 5 : 20));
    double rate = 0.8 * capacity;
    ManyHosts.SharedLoad run = cluster.openLoadUnderThePlan(rate, load, Duration.ofSeconds(30));
    return new Shares(assignment, capacity, rate, run.calls(), run.capacityShare());
  }

  private void sharesTable(List<Shares> runs, Duration load) {
    List<List<String>> rows = new ArrayList<>();
    for (Shares r : runs) {
      for (Map.Entry<String, Double> e : r.capacityShare().entrySet()) {
        double answered = r.calls().share(e.getKey());
        rows.add(List.of(r.assignment(), Report.fmt(r.capacity()), Report.fmt(r.rate()), e.getKey(), Report.fmt(e.getValue()),
            Report.fmt(answered), Report.fmt(answered - e.getValue()), Long.toString(r.calls().sent()),
            Long.toString(r.calls().lost()), r.calls().errors().toString(),
            Report.fmt(r.calls().okLatencyMs(50, 10, load.toSeconds())), Report.fmt(r.calls().okLatencyMs(99, 10, load.toSeconds()))));
      }
    }
    report.add(new Report.Table("6d. Many hosts: load shared by capacity against the even split",
        "demo (the demo MLP) on both hosts; the cluster's capacity measured with 64 calls in flight from a Kafka client,"
            + " then " + load.toSeconds() + " s of open-loop load at 80 % of it, half from the Kafka client, half over HTTP"
            + " through the two gateways. 'capacity share' is the host's share of the planned capacity of its slots, the mean of the plan"
            + " read as the load starts and every 10 s while it runs (serving evidence moves it under load);"
            + " 'answered share' its share of the OK answers (by the host each answer names). 'even' is a second cluster"
            + " with worker.assignment=even (Kafka's cooperative-sticky assignor). Latencies are of OK answers sent after"
            + " the first 10 s.",
        List.of("assignment", "capacity/s", "offered/s", "host", "capacity share", "answered share", "difference", "sent",
            "lost", "errors", "p50 ms", "p99 ms"), rows, self));
  }

  /** What the first error of each kind said, as a sentence ("" when every call was answered OK). */
  private static String errorDetails(Calls calls) {
    StringBuilder out = new StringBuilder();
    calls.errors().keySet().forEach(code -> out.append(" The first ").append(code).append(": ")
        .append(calls.firstDetail(code)).append('.'));
    return out.toString();
  }

  /** Answers a second over the 5 s windows {@code from} (inclusive) to {@code to} (exclusive). */
  private static double meanRate(Map<Long, Map<String, AtomicLong>> perWindow, long from, long to) {
    long total = 0;
    for (long w = from; w < to; w++) {
      total += perWindow.getOrDefault(w, Map.of()).values().stream().mapToLong(AtomicLong::get).sum();
    }
    return to > from ? total / (5.0 * (to - from)) : Double.NaN;
  }

  /**
   * When a joining host's environment reached the hosts topic and its slot of the load's model the
   * plan, in seconds after it was started ("not within N s" when it did not while the load ran).
   */
  record JoinSteps(String environment, String planned) {
    static JoinSteps watch(ManyHosts cluster, long startNanos, Duration within) {
      String environment = when(cluster, startNanos, within, "host-3's environment on the hosts topic",
          s -> s.hosts().containsKey("host-3"));
      String planned = when(cluster, startNanos, within, "host-3's slot of " + JOIN_MODEL + " in the plan",
          s -> s.assignments().values().stream()
              .anyMatch(a -> a.getHost().equals("host-3") && a.getModel().equals(JOIN_MODEL)));
      return new JoinSteps(environment, planned);
    }

    /** Seconds after {@code startNanos} when {@code test} first held ({@link ManyHosts#await}), or "not within". */
    private static String when(ManyHosts cluster, long startNanos, Duration within, String what, Predicate<Snapshot> test) {
      Duration left = within.minusNanos(System.nanoTime() - startNanos);
      try {
        cluster.await(what, left.isNegative() ? Duration.ZERO : left, test);
        return Report.fmt((System.nanoTime() - startNanos) / 1e9) + " s";
      } catch (IllegalStateException notYet) {
        return "not within " + within.toSeconds() + " s";
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "not seen (interrupted)";
      }
    }
  }

  /**
   * A third host joins while calls are kept in flight (the throughput per 5 s before and after),
   * then leaves with SIGTERM under open-loop load (nothing may be lost).
   */
  private void joinAndLeave(ManyHosts cluster, Duration load) throws Exception {
    PartitaClient client = cluster.client();
    // demo-heavy, not the demo MLP: a host adds throughput only where the hosts bound it. A demo
    // call costs its worker well under a millisecond and the three brokers (all on CPU 0, with the
    // planners, gateways and this load) about one, so demo calls are bounded by CPU 0 whatever the
    // hosts; a demo-heavy call costs its host milliseconds (64 x 128 inputs, a wide or pruned net).
    List<Tensor> row = ManyHosts.heavyRow(13);
    Map<Long, Map<String, AtomicLong>> perWindow = new ConcurrentHashMap<>();
    long start = System.nanoTime();
    long window = 5_000_000_000L;
    // The host joins after 50 s of steady load (the first 10 s warm the clients up and are not
    // counted), and answers 50-65 s after its start: the load runs on for about two minutes of it
    // serving.
    long warm = quick ? 5 : 10;
    long joinAt = quick ? 10 : 60;
    long length = quick ? 40 : 240;
    long[] firstAnswerOfNew = {-1};
    AtomicLong errors = new AtomicLong();
    CompletableFuture<String> joined = new CompletableFuture<>();
    class Lane {
      void next() {
        long now = System.nanoTime();
        if (now - start > length * 1_000_000_000L) {
          return;
        }
        client.infer(JOIN_MODEL, JOIN_MODEL, row).whenComplete((reply, failure) -> {
          long t = System.nanoTime() - start;
          if (failure != null || reply.getError() != null) {
            errors.incrementAndGet();
          } else {
            AnsweredBy where = AnsweredBy.of(reply.getInstance());
            String host = where == null ? "?" : where.host();
            perWindow.computeIfAbsent(t / window, w -> new ConcurrentHashMap<>()).computeIfAbsent(host, h -> new AtomicLong())
                .incrementAndGet();
            if (host.equals("host-3") && firstAnswerOfNew[0] < 0) {
              firstAnswerOfNew[0] = t;
            }
          }
          next();
        });
      }
    }
    for (int i = 0; i < 64; i++) {
      new Lane().next();
    }
    // The load runs for a set time and the host joins at a set second of it: a schedule of the
    // experiment, not a condition to wait for.
    Thread.sleep(joinAt * 1000);
    long joinNanos = System.nanoTime() - start;
    CompletableFuture.runAsync(() -> {
      try {
        joined.complete(cluster.fault(Cluster.Fault.START, "host-3", 0.2));
      } catch (Exception e) {
        joined.completeExceptionally(e);
      }
    });
    CompletableFuture<JoinSteps> steps = CompletableFuture.supplyAsync(() -> JoinSteps.watch(cluster, start + joinNanos,
        Duration.ofSeconds(length - joinAt)));
    Thread.sleep((length - joinAt) * 1000 + 5_000); // the rest of the load, and 5 s for its last answers
    joined.get();
    JoinSteps join = steps.get();
    // Throughput from the end of the warm-up to the start, and from 30 s after host-3's first
    // answer (rebalanced, warm) to the end.
    double before = meanRate(perWindow, warm / 5, joinAt / 5);
    long settled = firstAnswerOfNew[0] < 0 ? -1 : (firstAnswerOfNew[0] / 1_000_000_000L + 30 + 4) / 5;
    double afterRate = meanRate(perWindow, settled, length / 5);
    String after = settled < 0 || settled >= length / 5 ? "n/a (no full window with host-3 serving)"
        : Report.fmt(afterRate) + "/s from " + settled * 5 + " s on (" + Report.fmt(afterRate / before) + " times)";
    List<List<String>> rows = new ArrayList<>();
    for (long w = 0; w < length / 5; w++) {
      Map<String, AtomicLong> m = perWindow.getOrDefault(w, Map.of());
      long total = m.values().stream().mapToLong(AtomicLong::get).sum();
      rows.add(List.of(Long.toString(w * 5) + "-" + (w * 5 + 5), Report.fmt(total / 5.0),
          Report.fmt(m.getOrDefault("host-3", new AtomicLong()).get() / 5.0), new TreeMap<>(m).toString()));
    }
    report.add(new Report.Table("6e. Many hosts: a third host joins under load",
        "64 calls of " + JOIN_MODEL + " (one item each; the service model of the same name) kept in flight from a Kafka"
            + " client; at " + joinAt + " s `partita cluster fault start host-3 --cpus 0.2`"
            + " adds a worker host (worker and profiler). After the start: host-3's environment on the hosts topic "
            + join.environment() + ", its slot of " + JOIN_MODEL + " in the plan " + join.planned()
            + ", its first answer "
            + (firstAnswerOfNew[0] < 0 ? "never came" : Report.fmt((firstAnswerOfNew[0] - joinNanos) / 1e9) + " s")
            + "; " + errors.get() + " calls answered with an error. Answers " + Report.fmt(before) + "/s from " + warm + " s to the start, "
            + after + ".",
        List.of("seconds", "answers/s", "host-3 answers/s", "by host (5 s)"), rows, self));

    // The third host leaves with SIGTERM while open-loop load runs: it finishes what it holds. The
    // load is what the two hosts that stay can carry (80 % of the three's measured capacity less
    // host-3's share of it in the plan): more would overload them once it left, whatever the leave did.
    double capacity = cluster.measureCapacity(64, Duration.ofSeconds(5), Duration.ofSeconds(quick ? 5 : 15));
    double leaving = cluster.snapshot().capacityShare("host-3", ManyHosts.LOAD_MODEL, cluster.hosts());
    double rate = 0.8 * capacity * (1 - (Double.isNaN(leaving) ? 0 : leaving));
    long stopAt = load.toSeconds() / 3;
    CompletableFuture<Long> movedAfter = new CompletableFuture<>();
    Calls calls = OpenLoad.run(cluster.demoCallers(), rate, load, Duration.ofSeconds(30), second -> {
      if (second == stopAt) {
        CompletableFuture.runAsync(() -> {
          long t0 = System.nanoTime();
          try {
            cluster.fault(Cluster.Fault.STOP, "host-3", null);
            cluster.await("host-3's slots leave the plan", Duration.ofSeconds(90),
                s -> s.assignments().values().stream().noneMatch(a -> a.getHost().equals("host-3")));
            movedAfter.complete((System.nanoTime() - t0) / 1_000_000);
          } catch (Exception e) {
            movedAfter.completeExceptionally(e);
          }
        });
      }
    });
    long moved = movedAfter.get();
    report.add(new Report.Table("6f. Many hosts: a host leaves under load",
        "Open-loop load of " + Report.fmt(rate) + " calls/s for " + load.toSeconds() + " s (Kafka client and both"
            + " gateways): 80 % of what the hosts that stay can carry, the three hosts' measured capacity ("
            + Report.fmt(capacity) + "/s) less host-3's share of it in the plan (" + Report.fmt(leaving) + "); at " + stopAt + " s `partita cluster fault stop host-3` (SIGTERM: its worker answers and commits"
            + " what it holds, then leaves the group); the planner withdrew host-3's slots " + Report.fmt(moved / 1000.0)
            + " s after the signal." + errorDetails(calls),
        List.of("sent", "OK", "errors", "lost", "host-3 answers after the stop", "p99 ms before", "p99 ms after"),
        List.of(List.of(Long.toString(calls.sent()), Long.toString(calls.ok()), calls.errors().toString(),
            Long.toString(calls.lost()), Long.toString(calls.sentBetween(stopAt + 15, load.toSeconds()).okByHost()
                .getOrDefault("host-3", 0L)),
            Report.fmt(calls.okLatencyMs(99, 5, stopAt)), Report.fmt(calls.okLatencyMs(99, stopAt, load.toSeconds())))),
        self));
  }
}

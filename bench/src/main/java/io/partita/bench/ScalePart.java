package io.partita.bench;

import io.partita.bench.ScaleBench.Cell;
import io.partita.bench.ScaleBench.ChurnPhase;
import io.partita.bench.ScaleBench.Outcome;
import io.partita.bench.ScaleBench.Pass;
import io.partita.bench.ScaleBench.Rounds;
import io.partita.planner.metrics.PlannerMetrics;
import io.partita.planner.stream.PlanTable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Section 8 of the report, planning at scale: runs the cells of {@link ScaleBench} and the churn
 * run, and writes their tables (sizes, time per stage, growth between cells, churn).
 */
final class ScalePart {
  /** The cells of a full run: a sweep of hosts, of models and of service models, and the goal's size. */
  static final List<Cell> FULL = List.of(new Cell(10, 50, 10), new Cell(100, 50, 10), new Cell(1000, 50, 10),
      new Cell(100, 500, 10), new Cell(100, 50, 1000), new Cell(1000, 500, 10));
  static final List<Cell> QUICK = List.of(new Cell(8, 5, 2), new Cell(16, 5, 2), new Cell(16, 10, 4));
  static final long SEED = 20261203L;
  static final Cell WARM_UP = new Cell(20, 20, 4);

  private final Report report;
  private final String self;
  private final boolean quick;

  ScalePart(Report report, String self, boolean quick) {
    this.report = report;
    this.self = self;
    this.quick = quick;
  }

  void run(List<Cell> cells, Cell churnCell, Path workDir) throws Exception {
    // The JIT compiles the planner's paths through the first cell; a small cell first, thrown away,
    // keeps that out of the figures (the first 10-host cell measured 2-3x slower cold).
    System.out.println("Scale: warm-up cell " + WARM_UP.label() + " (not reported)...");
    ScaleBench.run(WARM_UP, SEED, new Rounds(quick ? 2 : 10, 2), workDir);
    List<Outcome> outcomes = new ArrayList<>();
    List<Cell> all = new ArrayList<>(cells);
    if (churnCell != null && !all.contains(churnCell)) {
      all.add(churnCell);
    }
    int churnSeconds = quick ? 5 : 60;
    int jitterPairs = quick ? 4 : 10;
    List<ScaleBench.ChurnPhase> phases = List.of();
    List<String> skipped = new ArrayList<>();
    for (Cell cell : all) {
      String tooBig = tooBigForHeap(cell, Runtime.getRuntime().maxMemory());
      if (tooBig != null) {
        System.out.println("Scale: " + cell.label() + " skipped: " + tooBig);
        skipped.add(cell.label() + " (" + tooBig + ")");
        continue;
      }
      Rounds base = quick ? new Rounds(3, 2) : cell.hosts() * cell.models() >= 100_000 ? new Rounds(12, 3) : new Rounds(20, 4);
      // The churn runs on the cell's loaded planner, after its rounds: loading 1,000 hosts again would double the time.
      Rounds rounds = cell.equals(churnCell) ? new Rounds(base.oneHost(), base.kind(), churnSeconds, jitterPairs) : base;
      System.out.println("Scale: " + cell.label() + " (seed " + SEED + ")...");
      Outcome o = ScaleBench.run(cell, SEED, rounds, workDir);
      if (cell.equals(churnCell)) {
        phases = o.churn();
      }
      if (!cells.contains(cell)) {
        continue;
      }
      outcomes.add(o);
      System.out.println(Report.render(new Report.Table("8 (so far). Planning at scale", null, sizeColumns(),
          List.of(sizeRow(o)), self)));
    }
    report.add(new Report.Table("8. Planning at scale",
        "The live planner's topology (PlannerTopology.build, in Kafka's test driver with in-memory stores, as `partita "
            + "replay` runs it) fed a synthetic fleet (seed " + SEED + "): hosts of four kinds (8 and 32 CPU cores; 16 cores "
            + "and one GPU; 32 cores and four GPUs; speeds 1 to 20), base models with one or two versions, service models "
            + "(weight files) and demand on each; every host profiles every model (CPU sizes 1, 2, 4; one GPU). Cells are "
            + "hosts x base models x service models per base model. 'one host': that host re-profiles every model 20 % "
            + "slower or faster, then one planning pass; 'kind': every host of one hardware kind (a quarter of the fleet) does. "
            + "Pass = the planning punctuation (inputs, the five methods, measurement asks). p99 of fewer than 100 passes is "
            + "their maximum. 'unchanged' = plan records written by a pass after one host re-sent the same timings. Heap = "
            + "retained after GC with the run open (stores, the planner's caches, and the replay's own copy of the plan "
            + "tables); stores = key and value bytes in all state stores."
            + (skipped.isEmpty() ? "" : " Not run, for want of heap: " + String.join("; ", skipped) + "."),
        sizeColumns(), outcomes.stream().map(ScalePart::sizeRow).toList(), self));
    List<List<String>> stageRows = new ArrayList<>();
    for (Outcome o : outcomes) {
      stageRows.add(stageRow(o, "initial", List.of(o.initial())));
      stageRows.add(stageRow(o, "one host", o.oneHost()));
      stageRows.add(stageRow(o, "kind", o.kind()));
    }
    List<String> stageColumns = new ArrayList<>(List.of("cell", "change"));
    PlannerMetrics.STAGES.forEach(s -> stageColumns.add(s + " ms"));
    stageColumns.add("pass ms");
    for (PlanTable t : PlanTable.values()) {
      stageColumns.add(t.id());
    }
    report.add(new Report.Table("8b. Where a pass's time goes",
        "Mean time per stage of the passes of each kind of change (the planner's partita.planner.stage timers): inputs "
            + "(the input tables as the pass reads them), versions (method 4), mappings (method 2), partitions (method 1), "
            + "serving (measurements from the slots' serving evidence), assignments (slots and instances, method 3), "
            + "routes, asks (grouping-mode measurements); then the mean plan "
            + "records written per pass, by table.",
        stageColumns, stageRows, self));
    report.add(new Report.Table("8c. How the cost grows",
        "Between two cells that differ in one dimension: the exponent b of y ~ x^b for each figure (1 = linear, 2 = "
            + "quadratic); x is the dimension that changed.",
        List.of("from", "to", "x", "one-host pass p50", "kind pass p50", "initial pass", "heap", "stores", "live records",
            "events/s"), growthRows(outcomes), self));
    if (!phases.isEmpty()) {
      List<List<String>> rows = new ArrayList<>();
      for (ScaleBench.ChurnPhase p : phases) {
        List<String> row = new ArrayList<>(List.of(churnCell.label(), p.what(), Integer.toString(p.passes()),
            Long.toString(p.events()), Report.fmt(p.p50Ms()), Report.fmt(p.p99Ms()), Report.fmt(p.maxMs())));
        double total = 0;
        for (PlanTable t : PlanTable.values()) {
          row.add(Report.fmt(p.recordsPerMinute().get(t.id())));
          total += p.recordsPerMinute().get(t.id());
        }
        row.add(Report.fmt(total));
        row.add(stages(p.meanStageMs()));
        row.add(stages(p.slowest().stageMs()) + "; records " + p.slowest().recordsByTable());
        rows.add(row);
      }
      List<String> columns = new ArrayList<>(List.of("cell", "phase", "passes", "timing events", "pass p50 ms",
          "pass p99 ms", "pass max ms"));
      for (PlanTable t : PlanTable.values()) {
        columns.add(t.id() + "/min");
      }
      columns.add("all/min");
      columns.add("mean ms per stage");
      columns.add("slowest pass, ms per stage");
      report.add(new Report.Table("8d. Churn",
          "On the cell's loaded planner, after its rounds, in simulated time: each simulated second one host leaves (its "
              + "environment deleted) and one that left (or one of " + Math.max(2, churnCell.hosts() / 100) + " spare hosts) "
              + "joins again (its environment and a fresh profile of every model), and the driver's clock moves one "
              + "debounce interval (planner.debounce.ms, 1 s), which fires exactly one planning pass; records carry the "
              + "simulated time. Phase 1 with exact timings (the real changes); phase 2 the same with the joining host's "
              + "profile and " + jitterPairs + " re-profiled (host, model) pairs a second jittered by up to +-5 %; phase 3 "
              + "the joining host is new hardware that never profiled: its environment and baseline score arrive first and "
              + "its profile " + ScaleBench.profileLag(churnSeconds) + " passes later, so the passes between plan it by "
              + "prediction from similar hosts (the phase names how many of the new hosts' partition plans were "
              + "predicted when their profile arrived). Plan records written per simulated minute, by table.",
          columns, rows, self));
    }
  }

  /**
   * Why a cell cannot run in a heap of {@code maxHeap} bytes, or null when it can. A cell keeps about
   * 3.6 KB a host and base model and 4 KB a service model (1,696 MiB measured at 1,000 x 500 x 10,
   * 209 MiB at 100 x 50 x 1000); with less than twice that, the collector thrashes for minutes and
   * then the heap runs out, taking the whole run (and its report) with it.
   */
  static String tooBigForHeap(Cell cell, long maxHeap) {
    long keeps = (long) cell.hosts() * cell.models() * 3_600L + (long) cell.models() * cell.serviceModelsPerModel() * 4_000L;
    long needs = 2 * keeps;
    if (maxHeap >= needs) {
      return null;
    }
    return "needs about " + (needs >> 20) + " MiB of heap, this JVM may use " + (maxHeap >> 20)
        + " MiB; give it more with PARTITA_JAVA_OPTS=-Xmx" + ((needs >> 30) + 1) + "g";
  }

  /** Stage times as one cell: {@code versions 12, mappings 40, ...} (stages under 0.5 ms left out). */
  private static String stages(Map<String, Double> ms) {
    List<String> parts = new ArrayList<>();
    ms.forEach((stage, t) -> {
      if (t >= 0.5) {
        parts.add(stage + " " + Report.fmt(t));
      }
    });
    return String.join(", ", parts);
  }

  private static List<String> sizeColumns() {
    return List.of("cell", "timing events", "events/s folded", "initial pass s", "one host p50 ms", "one host p99 ms",
        "kind p50 ms", "kind p99 ms", "records per one-host pass", "records per kind pass", "unchanged", "heap MiB",
        "stores MiB", "live plan records");
  }

  private static List<String> sizeRow(Outcome o) {
    return List.of(o.cell().label(), Long.toString(o.events()), Report.fmt(o.eventsPerSecond()),
        Report.fmt(o.initial().ms() / 1000), Report.fmt(ScaleBench.percentile(o.oneHost(), 0.5)),
        Report.fmt(ScaleBench.percentile(o.oneHost(), 0.99)), Report.fmt(ScaleBench.percentile(o.kind(), 0.5)),
        Report.fmt(ScaleBench.percentile(o.kind(), 0.99)), Report.fmt(median(o.oneHost(), p -> p.records())),
        Report.fmt(median(o.kind(), p -> p.records())), Integer.toString(o.unchangedRecords()),
        Report.fmt(o.heapBytes() / 1048576.0), Report.fmt(o.storeBytes() / 1048576.0), Integer.toString(o.liveRecords()));
  }

  private static List<String> stageRow(Outcome o, String change, List<Pass> passes) {
    List<String> row = new ArrayList<>(List.of(o.cell().label(), change));
    Map<String, Double> stages = ScaleBench.meanStages(passes);
    for (String s : PlannerMetrics.STAGES) {
      row.add(Report.fmt(stages.get(s)));
    }
    row.add(Report.fmt(passes.stream().mapToDouble(Pass::ms).average().orElse(Double.NaN)));
    for (PlanTable t : PlanTable.values()) {
      row.add(Report.fmt(passes.stream().mapToDouble(p -> p.recordsByTable().getOrDefault(t.id(), 0)).average().orElse(0)));
    }
    return row;
  }

  private static double median(List<Pass> passes, ToDoubleFunction<Pass> f) {
    return ScaleBench.percentile(passes.stream().mapToDouble(f).sorted().toArray(), 0.5);
  }

  private static List<List<String>> growthRows(List<Outcome> outcomes) {
    List<List<String>> rows = new ArrayList<>();
    for (int i = 0; i < outcomes.size(); i++) {
      for (int j = 0; j < outcomes.size(); j++) {
        Outcome a = outcomes.get(i);
        Outcome b = outcomes.get(j);
        String dimension = oneDimension(a.cell(), b.cell());
        if (dimension == null) {
          continue;
        }
        double x = switch (dimension) {
          case "hosts" -> (double) b.cell().hosts() / a.cell().hosts();
          case "models" -> (double) b.cell().models() / a.cell().models();
          default -> (double) b.cell().serviceModelsPerModel() / a.cell().serviceModelsPerModel();
        };
        rows.add(List.of(a.cell().label(), b.cell().label(), dimension + " x" + Report.fmt(x),
            exponent(x, ScaleBench.percentile(a.oneHost(), 0.5), ScaleBench.percentile(b.oneHost(), 0.5)),
            exponent(x, ScaleBench.percentile(a.kind(), 0.5), ScaleBench.percentile(b.kind(), 0.5)),
            exponent(x, a.initial().ms(), b.initial().ms()), exponent(x, a.heapBytes(), b.heapBytes()),
            exponent(x, a.storeBytes(), b.storeBytes()), exponent(x, a.liveRecords(), b.liveRecords()),
            exponent(x, a.eventsPerSecond(), b.eventsPerSecond())));
      }
    }
    return rows;
  }

  /** The one dimension in which {@code b} is larger than {@code a} (the others equal), or null. */
  private static String oneDimension(Cell a, Cell b) {
    boolean h = b.hosts() > a.hosts();
    boolean m = b.models() > a.models();
    boolean s = b.serviceModelsPerModel() > a.serviceModelsPerModel();
    boolean sameH = a.hosts() == b.hosts();
    boolean sameM = a.models() == b.models();
    boolean sameS = a.serviceModelsPerModel() == b.serviceModelsPerModel();
    if (h && sameM && sameS) {
      return "hosts";
    }
    if (m && sameH && sameS) {
      return "models";
    }
    if (s && sameH && sameM) {
      return "service models";
    }
    return null;
  }

  private static String exponent(double x, double ya, double yb) {
    if (!(ya > 0) || !(yb > 0) || x == 1) {
      return "n/a";
    }
    return Report.fmt(Math.log(yb / ya) / Math.log(x));
  }
}

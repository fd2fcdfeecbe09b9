package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the benchmark harness working: the quick mode runs every part for real (embedded broker,
 * worker, gateway, ONNX Runtime) and writes a report with figures in every section. It checks the
 * harness, not the figures.
 */
@Tag("slow")
class BenchQuickIT {
  @TempDir Path dir;

  @Test
  void shouldWriteEverySectionWithMeasuredFigures() throws Exception {
    Path out = dir.resolve("BENCHMARKS.md");
    int code = new Bench(true, out, dir.resolve("work"), false).run();
    assertThat(code).isZero();
    String report = Files.readString(out);
    for (String section : List.of("1. Pipeline against the engine", "2. Planner against reality", "3a. Weight files: memory",
        "3b. Weight files: throughput", "3c. Weight files through the pipeline", "4. Planning speed", "4b. Replay re-planning",
        "5. Kafka ceiling", "2b. The loop, per model", "1e. Batch jobs", "1f. CPU split (batch jobs)",
        "1g. Where a batch job's time goes", "1h. Where the time goes (gateway paths of table 1)",
        "1b. Share of the engine", "1c. Where the time goes",
        "1d. CPU split", "5b. Where the time goes (gateway paths)", "5c. CPU split (Kafka ceiling)", "5d. Against a bare Kafka echo",
        "5e. The gateway per call, warm JVM", "1j. Online calls batched on the wire",
        "8. Planning at scale", "8b. Where a pass's time goes", "8c. How the cost grows", "8d. Churn")) {
      assertThat(report).contains("### " + section);
    }
    assertThat(report).contains("Machine: ").contains("Reproduce: `./partita bench --quick`");
    // Every pipeline path produced a positive throughput: rows end with measured numbers, not n/a.
    for (String path : List.of("(a) engine, in-process", "(b) Kafka, Java client -> worker", "(c) HTTP -> gateway -> Kafka -> worker",
        "(d) gRPC -> gateway -> Kafka -> worker")) {
      Matcher m = Pattern.compile("\\| demo-mlp \\| " + Pattern.quote(path) + " \\| off \\| 1 \\| ([0-9.e+-]+) \\|").matcher(report);
      assertThat(m.find()).as("row for %s in%n%s", path, report).isTrue();
      assertThat(Double.parseDouble(m.group(1))).as(path).isPositive();
    }
    // Section 2 closed the loop: the planner asked for at least one grouping-mode measurement of its choice.
    Matcher loop = Pattern.compile("\\| demo-mlp \\| 8 \\| \\[[0-9, ]+\\] \\| \\[[0-9, ]+\\] \\| ([0-9]+) \\| ([0-9]+) \\|").matcher(report);
    assertThat(loop.find()).as("loop row of section 2b in%n%s", report).isTrue();
    assertThat(Integer.parseInt(loop.group(1))).as("asks").isPositive();
    assertThat(Integer.parseInt(loop.group(2))).as("groupings measured").isPositive();
    assertThat(report).contains("final choice");
    // 1e ran a packed job on the plan's slots to DONE with every row answered; 1f has its CPU, 1g its runner's stages.
    Matcher job = Pattern.compile("\\| demo-mlp \\| planned: [^|]+ \\| 2000 \\| 64 \\| [0-9.e+-]+ \\| ([0-9.e+-]+) \\| [0-9.e+-]+ \\| 0 \\|")
        .matcher(report);
    assertThat(job.find()).as("packed job row of 1e in%n%s", report).isTrue();
    assertThat(Double.parseDouble(job.group(1))).as("job items/s").isPositive();
    String table1f = report.substring(report.indexOf("### 1f."), report.indexOf("### 1g."));
    Matcher jobCpu = Pattern.compile("\\| demo-mlp \\| planned: [^|]+ \\| 2000 \\| 64 \\| [0-9.e+-]+ \\| ([0-9.e+-]+) \\| ([0-9.e+-]+) \\|")
        .matcher(table1f);
    assertThat(jobCpu.find()).as("packed job row of 1f in%n%s", table1f).isTrue();
    assertThat(Double.parseDouble(jobCpu.group(2))).as("CPU us per row").isPositive();
    String table1g = report.substring(report.indexOf("### 1g."), report.indexOf("### 2."));
    Matcher jobStages = Pattern.compile("\\| demo-mlp \\| planned: [^|]+ \\| 2000 \\| 64 \\| ([0-9.e+-]+) \\|( [0-9.e+-]+ \\|){5} ([0-9]+) \\|")
        .matcher(table1g);
    assertThat(jobStages.find()).as("packed job row of 1g in%n%s", table1g).isTrue();
    assertThat(Double.parseDouble(jobStages.group(1))).as("run s").isPositive();
    assertThat(Integer.parseInt(jobStages.group(3))).as("requests: 2000 rows in packs of up to 64").isBetween(32, 2000);
    // 1h has the gateway's stages for table 1's HTTP binary rows, on one slot and on the plan's slots.
    String table1h = report.substring(report.indexOf("### 1h."), report.indexOf("###", report.indexOf("### 1h.") + 4));
    for (String batching : List.of("off \\| 1", "planned: [^|]+ \\| [0-9]+")) {
      Matcher h = Pattern.compile("\\| demo-mlp \\| \\(c\\) HTTP, binary tensors \\| " + batching + " \\| ([0-9]+) \\|( [0-9.e+-]+ \\|){3} ([0-9.e+-]+) \\|")
          .matcher(table1h);
      assertThat(h.find()).as("1h row for %s in%n%s", batching, table1h).isTrue();
      assertThat(Integer.parseInt(h.group(1))).as("calls").isPositive();
      assertThat(Double.parseDouble(h.group(3))).as("kafka ms").isPositive();
    }
    // 3c has rows with requests in flight beside the closed loop's.
    assertThat(report).contains("| Kafka | spread over 10 service models | 32 in flight |")
        .contains("| HTTP | spread over 10 service models | 32 in flight |");
    // The stage table has the worker's run for the Kafka rows (from the replies' partita-stages header), and the plan's rows ran.
    Matcher stages = Pattern.compile("\\| demo-mlp \\| off \\| 1 clients \\| ([0-9]+) \\|( [0-9.e+-]+ \\|){4} ([0-9.e+-]+) \\|").matcher(report);
    assertThat(stages.find()).as("stage row in%n%s", report).isTrue();
    assertThat(Integer.parseInt(stages.group(1))).isPositive();
    assertThat(Double.parseDouble(stages.group(3))).as("run ms").isPositive();
    assertThat(report).contains("| 64 in flight |").contains("planned: ");
    // The planned rows ran the final plan's assignments, which the worker followed (PipelineEnv waits until it runs exactly those slots).
    assertThat(report).containsPattern("\\*\\*demo-mlp plan\\*\\*: planned: [0-9]+ slots? \\[[0-9, ]+\\][^(]*\\(plan\\.assignments of section 2's final plan: cpu-0 on CPUs");
    Matcher grpc = Pattern.compile("\\| \\(d\\) gRPC round trip \\(raw contents\\) \\| 1 \\| ([0-9.e+-]+) \\|").matcher(report);
    assertThat(grpc.find()).as("gRPC row of the Kafka ceiling in%n%s", report).isTrue();
    assertThat(Double.parseDouble(grpc.group(1))).isPositive();
    // 5d: the hop, the bare echo and Partita each answered at every load; Partita's row has its ratio to the echo.
    String table5d = report.substring(report.indexOf("### 5d."), report.indexOf("###", report.indexOf("### 5d.") + 4));
    for (String load : List.of("1", "16", "256")) {
      for (String path : List.of("(e1) one-way hop, produce -> consume", "(e2) bare Kafka echo")) {
        Matcher row = Pattern.compile("\\| " + Pattern.quote(path) + " \\| " + load + " \\| ([0-9.e+-]+) \\|").matcher(table5d);
        assertThat(row.find()).as("5d row for %s at %s in%n%s", path, load, table5d).isTrue();
        assertThat(Double.parseDouble(row.group(1))).as(path).isPositive();
      }
      Matcher partita = Pattern.compile("\\| \\(e3\\) Partita, Kafka client, empty model \\| " + load
          + " \\| ([0-9.e+-]+) \\|( [^|]+ \\|){5} ([0-9.e+-]+) \\|").matcher(table5d);
      assertThat(partita.find()).as("5d Partita row at %s in%n%s", load, table5d).isTrue();
      assertThat(Double.parseDouble(partita.group(1))).isPositive();
      assertThat(Double.parseDouble(partita.group(3))).as("vs echo").isPositive();
      String packed = table5d.lines().filter(l -> l.startsWith("| (e4) Partita, Kafka client packing") && l.contains(" | " + load + " | "))
          .findFirst().orElseThrow(() -> new AssertionError("no 5d packing row at " + load + " in\n" + table5d));
      String[] cells = packed.split("\\|");
      assertThat(Double.parseDouble(cells[3].trim())).as("packed calls/s at %s", load).isPositive();
      if (load.equals("256")) { // 256 calls in flight: they share records
        assertThat(Double.parseDouble(cells[cells.length - 2].trim())).as("calls per record at 256 in%n%s", packed).isGreaterThan(1.5);
      }
    }
    // 1j: the HTTP/1.1 client's calls and the HTTP/2 client's (one connection, the coalescer on) measured; at 64 in flight
    // the HTTP/2 calls shared request records.
    String table1j = report.substring(report.indexOf("### 1j."), report.indexOf("###", report.indexOf("### 1j.") + 4));
    for (String client : List.of("HTTP/1.1, one per call | off | off", "HTTP/2, one connection | defaults | on")) {
      String line = table1j.lines().filter(l -> l.startsWith("| demo-mlp | " + client + " | 64 |")).findFirst()
          .orElseThrow(() -> new AssertionError("no 1j row for " + client + " in\n" + table1j));
      String[] cells = line.split("\\|");
      assertThat(Double.parseDouble(cells[6].trim())).as("1j items/s, %s", client).isPositive();
      if (client.startsWith("HTTP/2")) {
        assertThat(Double.parseDouble(cells[9].trim())).as("1j calls per request record in%n%s", line).isGreaterThan(1.5);
      }
    }
    // 5e: each path measured, the gateway's rows with their CPU ratio to the Kafka client's, what they spend above
    // their transport alone (the transport-alone rows answered every call) and their allocation.
    String table5e = report.substring(report.indexOf("### 5e."), report.indexOf("###", report.indexOf("### 5e.") + 4));
    List<String> gatewayPaths = List.of(GatewayCostBench.HTTP, GatewayCostBench.GRPC, GatewayCostBench.HTTP2);
    for (String path : List.of(GatewayCostBench.KAFKA, GatewayCostBench.HTTP, GatewayCostBench.GRPC, GatewayCostBench.HTTP2,
        GatewayCostBench.HTTP_ALONE, GatewayCostBench.GRPC_ALONE, GatewayCostBench.HTTP2_ALONE)) {
      String line = table5e.lines().filter(l -> l.startsWith("| " + path + " |")).findFirst()
          .orElseThrow(() -> new AssertionError("no 5e row for " + path + " in\n" + table5e));
      String[] cells = line.split("\\|");
      assertThat(Double.parseDouble(cells[3].trim())).as("5e calls/s of %s", path).isPositive();
      if (!path.equals(GatewayCostBench.KAFKA)) {
        assertThat(Double.parseDouble(cells[10].trim())).as("5e gateway CPU over the Kafka client's, %s", path).isPositive();
        assertThat(Double.parseDouble(cells[16].trim())).as("5e gateway KB/call, %s", path).isPositive();
      }
      if (gatewayPaths.contains(path)) {
        assertThat(Double.parseDouble(cells[11].trim())).as("5e gateway CPU above its transport alone, %s", path).isPositive();
      }
    }
    // Table 1 has the echo beside the model's in-flight rows, and those rows their ratio to it.
    assertThat(report).containsPattern("\\| demo-mlp \\| \\(e\\) bare Kafka echo \\(no worker\\), 64 in flight \\|\\s*\\| 64 \\| [0-9.e+]+ \\|")
        .containsPattern("in flight \\| off \\| 64 \\|[^\\n]*x echo \\|");
    // The gateway's Server-Timing answers reached table 5b: calls counted and a Kafka stage, for HTTP and gRPC.
    String table5b = report.substring(report.indexOf("### 5b."), report.indexOf("### 5c."));
    for (String path : List.of("(c) HTTP round trip", "(d) gRPC round trip (raw contents)")) {
      Matcher gateway = Pattern.compile("\\| " + Pattern.quote(path) + " \\| 1 \\| ([0-9]+) \\|( [0-9.e+-]+ \\|){3} ([0-9.e+-]+) \\|")
          .matcher(table5b);
      assertThat(gateway.find()).as("5b row for %s in%n%s", path, table5b).isTrue();
      assertThat(Integer.parseInt(gateway.group(1))).isPositive();
      assertThat(Double.parseDouble(gateway.group(3))).as("kafka ms").isPositive();
    }
  }
}

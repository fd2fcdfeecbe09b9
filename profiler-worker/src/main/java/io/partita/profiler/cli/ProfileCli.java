package io.partita.profiler.cli;

import ai.onnxruntime.OrtEnvironment;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.common.Topics;
import io.partita.common.cli.UsageErrors;
import io.partita.common.kafka.TopicAdmin;
import io.partita.common.serde.Codecs;
import io.partita.models.repo.RepositoryException;
import io.partita.profiler.ProfilerConfig;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.kafka.EventPublisher;
import io.partita.profiler.measure.BaselineBenchmark;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ModelRef;
import io.partita.profiler.measure.ProgressListener;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ModelLookupException;
import io.partita.profiler.run.ProfileOutcome;
import io.partita.profiler.run.ProfileRunner;
import io.partita.profiler.run.ProfileSink;
import io.partita.profiler.run.ProfileSpec;
import io.partita.profiler.run.RepositoryModels;
import io.partita.profiler.search.Measured;
import io.partita.profiler.stats.Sampler;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code partita profile}: measures a model on this machine, prints the host environment, or runs
 * the baseline benchmark. Progress goes to {@code err}, results to {@code out} (a table, or one JSON
 * object per point with {@code --json}). With {@code --broker} the results are published as well:
 * one {@code TimingEvent} per point or grouping, and this host's {@code HostEnvironment} (after the
 * baseline benchmark unless {@code --no-baseline}), exactly as the profiler service publishes them.
 *
 * <p>A picocli command: the launcher mounts it as {@code partita profile}; {@link #run} runs it on
 * its own. Flags are typed (their converters name what they expected), usage errors are answered
 * by {@link UsageErrors} before anything is measured.
 *
 * <p>Exit codes: 0 every point measured, 2 bad command line (nothing measured), 3 some points
 * failed (they are still printed, with their errors), 4 the broker could not be reached or refused
 * the records (what was measured is still printed).
 */
@Command(name = "profile",
    description = "Measure a model on this machine (latency percentiles and throughput over partition and batch"
        + " sizes), print the host environment, or run the baseline benchmark; --broker also publishes.",
    synopsisHeading = "",
    customSynopsis = {
        "usage: partita profile --model-repo DIR --model M [--version V]",
        "         [--sizes 1,2] [--batches 1,8] [--grouping 1,1] [--providers CPU,CUDA]",
        "         [--dim NAME=SIZE]... [--budget-ms N] [--host-id ID] [--no-spin]",
        "         [--json] [--broker HOST:PORT [--topic-prefix P] [--no-baseline]]",
        "       partita profile --env [--host-id ID]",
        "         [--broker HOST:PORT [--topic-prefix P] [--no-baseline]]",
        "       partita profile --baseline [--compare-grid] [--budget-ms N] [--json]",
        "         [--broker HOST:PORT [--topic-prefix P]]"},
    descriptionHeading = "%n",
    optionListHeading = "%nOptions:%n",
    sortOptions = false)
public final class ProfileCli implements Callable<Integer> {

  public static final int OK = 0;
  public static final int USAGE = UsageErrors.EXIT_CODE;
  public static final int SOME_FAILED = 3;
  public static final int PUBLISH_FAILED = 4;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration BROKER_TIMEOUT = Duration.ofSeconds(15);

  @Spec CommandSpec spec;

  @Option(names = "--model-repo", paramLabel = "DIR",
      description = "Model repository laid out as DIR/<model>/<version>/model.onnx (see docs/models.md).")
  Path modelRepo;

  @Option(names = "--model", paramLabel = "M", description = "Model id (a directory under --model-repo).")
  String model;

  @Option(names = "--version", paramLabel = "V", description = "Version id; default: the highest.")
  String version;

  @Option(names = "--sizes", paramLabel = "LIST", split = ",", hideParamSyntax = true, converter = Positive.class,
      description = "CPU partition sizes (cores) or GPU counts; default 1,2,4,... and all usable cores.")
  List<Integer> sizes = List.of();

  @Option(names = "--batches", paramLabel = "LIST", split = ",", hideParamSyntax = true, converter = Positive.class,
      description = "Batch sizes; default 1,2,4,8,16,32 (or the model's fixed batch).")
  List<Integer> batches = List.of();

  @Option(names = "--grouping", paramLabel = "LIST", split = ",", hideParamSyntax = true, converter = Positive.class,
      description = "Measure this grouping at once (partitions run concurrently) instead of single sizes.")
  List<Integer> grouping = List.of();

  @Option(names = "--providers", paramLabel = "LIST", split = ",", hideParamSyntax = true, converter = ProviderName.class,
      description = "Execution providers; default: every provider that loads here.")
  List<Provider> providers = List.of();

  @Option(names = "--dim", paramLabel = "NAME=SIZE", converter = Dim.Converter.class,
      description = "Size of a named dynamic input dimension other than the batch.")
  List<Dim> dims = List.of();

  @Option(names = "--budget-ms", paramLabel = "N", converter = Positive.class,
      description = "Time budget per point after warm-up (default ${DEFAULT-VALUE}).")
  int budgetMs = (int) ProfileOptions.DEFAULT_BUDGET_MS;

  @Option(names = "--host-id", paramLabel = "ID", description = "Host id in results (default: the host name).")
  String hostId;

  @Option(names = "--no-spin",
      description = "Idle ONNX Runtime threads sleep instead of spinning (for cores shared with other work).")
  boolean noSpin;

  @Option(names = "--json", description = "One JSON object per point on stdout instead of a table.")
  boolean json;

  @Option(names = "--env", description = "Print this host's environment as JSON.")
  boolean env;

  @Option(names = "--baseline", description = "Run the baseline benchmark (hill climbing over threads and batch size).")
  boolean baseline;

  @Option(names = "--compare-grid",
      description = "With --baseline: also measure the full grid and report how close the search came.")
  boolean compareGrid;

  @Option(names = "--broker", paramLabel = "HOST:PORT", converter = HostPort.class,
      description = "Also publish to this Kafka cluster: the timing events and this host's environment.")
  String broker;

  @Option(names = "--topic-prefix", paramLabel = "P", converter = TopicPrefix.class,
      description = "With --broker: prefix of the topics (default partita).")
  String topicPrefix;

  @Option(names = "--no-baseline",
      description = "With --broker: publish the environment without running the baseline benchmark first.")
  boolean noBaseline;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  private final PrintStream out;
  private final PrintStream err;

  /** The command as the launcher mounts it: results on standard output, progress on standard error. */
  public ProfileCli() {
    this(System.out, System.err);
  }

  public ProfileCli(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    String[] rest = args.length > 0 && args[0].equals("profile") ? Arrays.copyOfRange(args, 1, args.length) : args;
    System.exit(run(rest, System.out, System.err));
  }

  /**
   * Runs the command with the arguments that follow the word {@code profile} (a leading
   * {@code profile} is refused as an unknown flag); returns the exit code.
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return new CommandLine(new ProfileCli(out, err))
        .setOut(new PrintWriter(out, true, StandardCharsets.UTF_8))
        .setErr(new PrintWriter(err, true, StandardCharsets.UTF_8))
        .setParameterExceptionHandler(new UsageErrors())
        .execute(args);
  }

  /** A positive whole number; its refusal names what it expected. */
  static final class Positive implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String text) {
      try {
        int v = Integer.parseInt(text.trim());
        if (v >= 1) {
          return v;
        }
      } catch (NumberFormatException e) {
        // refused below, with the text as typed
      }
      throw new TypeConversionException("expected a positive whole number, got '" + text + "'");
    }
  }

  static final class ProviderName implements ITypeConverter<Provider> {
    @Override
    public Provider convert(String text) {
      try {
        return Provider.valueOf(text.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException("unknown provider '" + text + "'; known: CPU, CUDA");
      }
    }
  }

  /** {@code --dim NAME=SIZE}: the size of a named dynamic input dimension. */
  record Dim(String name, long size) {
    static final class Converter implements ITypeConverter<Dim> {
      @Override
      public Dim convert(String text) {
        int eq = text.indexOf('=');
        if (eq <= 0) {
          throw new TypeConversionException("expected NAME=SIZE, got '" + text + "'");
        }
        return new Dim(text.substring(0, eq), new Positive().convert(text.substring(eq + 1)));
      }
    }
  }

  /** {@code HOST:PORT[,HOST:PORT...]}, each port in 1..65535. */
  static final class HostPort implements ITypeConverter<String> {
    @Override
    public String convert(String text) {
      for (String server : text.split(",")) {
        int colon = server.lastIndexOf(':');
        boolean ok = colon > 0 && colon < server.length() - 1;
        if (ok) {
          try {
            int port = Integer.parseInt(server.substring(colon + 1));
            ok = port > 0 && port < 65536;
          } catch (NumberFormatException e) {
            ok = false;
          }
        }
        if (!ok) {
          throw new TypeConversionException("expected HOST:PORT[,HOST:PORT...], got '" + text + "'");
        }
      }
      return text;
    }
  }

  static final class TopicPrefix implements ITypeConverter<String> {
    @Override
    public String convert(String text) {
      try {
        return new Topics(text).prefix();
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** The parsed flags as one value, after the checks that span several flags. */
  ProfileOptions options() {
    if (env && baseline) {
      throw usage("--baseline cannot be combined with --env");
    }
    ProfileOptions.Mode mode = env ? ProfileOptions.Mode.ENV : baseline ? ProfileOptions.Mode.BASELINE
        : ProfileOptions.Mode.MEASURE;
    if (mode == ProfileOptions.Mode.MEASURE) {
      if (modelRepo == null) {
        throw usage("--model-repo is required: the directory holding <model>/<version>/model.onnx");
      }
      if (model == null) {
        throw usage("--model is required: the model id, a directory under " + modelRepo);
      }
    }
    if (compareGrid && mode != ProfileOptions.Mode.BASELINE) {
      throw usage("--compare-grid only applies with --baseline");
    }
    if (!grouping.isEmpty() && !sizes.isEmpty()) {
      throw usage("--grouping and --sizes cannot be combined: a grouping already says the partition sizes");
    }
    if (broker == null && topicPrefix != null) {
      throw usage("--topic-prefix only applies with --broker");
    }
    if (broker == null && noBaseline) {
      throw usage("--no-baseline only applies with --broker (it is about the published environment)");
    }
    Map<String, Long> dimSizes = new LinkedHashMap<>();
    dims.forEach(d -> dimSizes.put(d.name(), d.size()));
    return new ProfileOptions(mode, new ProfileOptions.Target(modelRepo, model, version),
        new ProfileOptions.Grid(List.copyOf(sizes), List.copyOf(batches), List.copyOf(grouping), List.copyOf(providers), compareGrid),
        Map.copyOf(dimSizes), budgetMs, hostId, json, !noSpin,
        new ProfileOptions.Publish(broker, topicPrefix == null ? Topics.DEFAULT_PREFIX : topicPrefix, !noBaseline));
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  @Override
  public Integer call() {
    ProfileOptions options = options();
    ModelRef model = null;
    if (options.mode() == ProfileOptions.Mode.MEASURE) {
      try {
        model = locate(options);
      } catch (UsageException e) {
        throw usage(e.getMessage());
      }
    }
    return run(options, model, out, err);
  }

  private static int run(ProfileOptions options, ModelRef model, PrintStream out, PrintStream err) {
    Publishing publishing = null;
    if (options.publish().broker() != null) {
      try {
        publishing = Publishing.open(options);
      } catch (RuntimeException e) {
        err.println("--broker " + options.publish().broker() + ": cannot reach the Kafka cluster or create its topics: "
            + e.getMessage());
        return PUBLISH_FAILED;
      }
    }
    try {
      OrtEnvironment env = OrtEnvironment.getEnvironment();
      HostProbe probe = HostProbe.live();
      ProbedHost host = probe.probe(options.hostId() != null ? options.hostId() : probe.hostname(),
          ProviderProbe.probe(env));
      Measurer.Settings settings = new Measurer.Settings(
          Sampler.Settings.ofBudgetMillis(options.budgetMillis()).withRateBlocks(host.rateBlockNanos()), options.dims(),
          CommandRunner.processes(), options.mode() == ProfileOptions.Mode.MEASURE, options.spinning());
      Measurer measurer = new Measurer(env, host, settings);
      int code = switch (options.mode()) {
        case ENV -> {
          if (publishing != null) {
            host = withBaseline(options, env, host, err);
          }
          out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(host));
          yield OK;
        }
        case BASELINE -> baseline(measurer, options, out, err, publishing);
        case MEASURE -> measure(env, settings, host, model, options, out, err, publishing);
      };
      if (publishing != null) {
        if (options.mode() == ProfileOptions.Mode.MEASURE) {
          publishing.publisher().environment(withBaseline(options, env, host, err));
        } else if (options.mode() == ProfileOptions.Mode.ENV) {
          publishing.publisher().environment(host);
        }
        String failure = publishing.finish();
        if (failure != null) {
          err.println("--broker " + options.publish().broker() + ": the cluster refused the records: " + failure);
          return PUBLISH_FAILED;
        }
        err.println("published to " + options.publish().broker() + " (topic prefix " + options.publish().topicPrefix() + ")");
      }
      return code;
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON", e);
    } finally {
      if (publishing != null) {
        publishing.close();
      }
    }
  }

  /** The version to measure, through the models module's repository scan. */
  private static ModelRef locate(ProfileOptions options) throws UsageException {
    RepositoryModels models;
    try {
      models = RepositoryModels.scan(options.target().modelRepo());
    } catch (RepositoryException e) {
      throw new UsageException("--model-repo: " + e.getMessage());
    }
    try {
      return options.target().version() == null
          ? models.latest(options.target().model())
          : models.resolve(options.target().model(), options.target().version()).get(0);
    } catch (ModelLookupException e) {
      throw new UsageException("--" + e.field() + ": " + e.getMessage());
    }
  }

  /** The environment with a baseline score, for publishing; without one when --no-baseline. */
  private static ProbedHost withBaseline(ProfileOptions options, OrtEnvironment env, ProbedHost host,
                                              PrintStream err) {
    if (!options.publish().baseline()) {
      return host;
    }
    Measurer measurer = new Measurer(env, host, new Measurer.Settings(
        Sampler.Settings.ofBudgetMillis(ProfilerConfig.DEFAULT_BASELINE_BUDGET_MS), Map.of(),
        CommandRunner.processes(), false, options.spinning()));
    ProgressBar bar = new ProgressBar(err);
    try {
      return host.withBaseline(new BaselineBenchmark(measurer).run(false, bar).score());
    } catch (IllegalStateException e) {
      err.println("\nthe baseline benchmark failed, publishing the environment without a score: " + e.getMessage());
      return host;
    } finally {
      bar.done();
    }
  }

  private static int measure(OrtEnvironment env, Measurer.Settings settings, ProbedHost host, ModelRef model,
                             ProfileOptions options, PrintStream out, PrintStream err, Publishing publishing)
      throws JsonProcessingException {
    String requestId = "cli-" + host.hostId() + "-" + UUID.randomUUID();
    ProfileSpec spec = new ProfileSpec(requestId, model.model(), model.version(), options.grid().sizes(), options.grid().batches(),
        options.grid().grouping().isEmpty() ? List.of() : List.of(options.grid().grouping()), options.grid().providers(),
        options.budgetMillis());
    ProgressBar bar = new ProgressBar(err);
    ProfileSink sink = progress(bar);
    if (publishing != null) {
      sink = publishing.publisher().sink(requestId, host.hostId(), sink);
    }
    ProfileOutcome outcome = new ProfileRunner(env, settings).run(spec, host, List.of(model), sink);
    bar.done();
    if (options.grid().grouping().isEmpty()) {
      List<TimingResult> results = outcome.points();
      if (options.json()) {
        for (TimingResult r : results) {
          out.println(JSON.writeValueAsString(toJson(r)));
        }
      } else {
        out.println("model " + model.model() + " version " + model.version() + " on " + host.hostId()
            + " (" + host.usableCores() + " usable cores, budget " + options.budgetMillis() + " ms per point)");
        out.print(table(results));
      }
    } else {
      for (GroupingResult g : outcome.groupings()) {
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
    }
    return outcome.ok() ? OK : SOME_FAILED;
  }

  /** Progress of a profile run drawn on the bar. */
  private static ProfileSink progress(ProgressListener bar) {
    return new ProfileSink() {
      private String label = "";

      @Override
      public void starting(int done, int total, String label) {
        this.label = label;
        bar.starting(done, total, label);
      }

      @Override
      public void point(TimingResult result, int done, int total) {
        bar.finished(done - 1, total, label, result.ok());
      }

      @Override
      public void grouping(GroupingResult result, int done, int total) {
        bar.finished(done - 1, total, label, result.ok());
      }
    };
  }

  private static int baseline(Measurer measurer, ProfileOptions options, PrintStream out, PrintStream err,
                              Publishing publishing)
      throws JsonProcessingException {
    ProgressBar bar = new ProgressBar(err);
    BaselineBenchmark.Report report = new BaselineBenchmark(measurer).run(options.grid().compareGrid(), bar);
    bar.done();
    if (publishing != null) {
      publishing.publisher().environment(measurer.host().withBaseline(report.score()));
    }
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

  /** A producer and a publisher for --broker, with the topics made sure of before anything is measured. */
  private record Publishing(KafkaProducer<String, byte[]> producer, EventPublisher publisher) {

    static Publishing open(ProfileOptions options) {
      Topics topics = new Topics(options.publish().topicPrefix());
      Properties admin = new Properties();
      admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, options.publish().broker());
      admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) BROKER_TIMEOUT.toMillis());
      admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) BROKER_TIMEOUT.toMillis());
      try (Admin a = Admin.create(admin)) {
        TopicAdmin.ensure(a, topics.infrastructure(), (short) 3);
      }
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, options.publish().broker());
      p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
      p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) BROKER_TIMEOUT.toMillis());
      p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) (2 * BROKER_TIMEOUT.toMillis()));
      p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) BROKER_TIMEOUT.toMillis());
      KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p);
      return new Publishing(producer, new EventPublisher(producer, topics, Codecs.singleObject(),
          System::currentTimeMillis));
    }

    /** Waits for every acknowledgement; the first refusal's message, or null. */
    String finish() {
      try {
        publisher.awaitAcks();
        return null;
      } catch (ExecutionException e) {
        return String.valueOf(e.getCause().getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "interrupted";
      } catch (RuntimeException e) {
        return e.getMessage();
      }
    }

    void close() {
      producer.close(BROKER_TIMEOUT);
    }
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

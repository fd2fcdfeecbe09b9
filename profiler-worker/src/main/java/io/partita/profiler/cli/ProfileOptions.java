package io.partita.profiler.cli;

import io.partita.common.Topics;
import io.partita.profiler.env.ProviderProbe.Provider;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The parsed {@code partita profile} command line. Exactly one mode: measure a model (the default,
 * needs --model-repo and --model), {@code --env} (print the host environment) or {@code --baseline}
 * (run the baseline benchmark).
 */
public record ProfileOptions(
    Mode mode,
    Path modelRepo,
    String model,
    String version,
    List<Integer> sizes,
    List<Integer> batches,
    List<Integer> grouping,
    List<Provider> providers,
    Map<String, Long> dims,
    long budgetMillis,
    String hostId,
    boolean json,
    boolean compareGrid,
    boolean spinning,
    String broker,
    String topicPrefix,
    boolean baseline) {

  public enum Mode { MEASURE, ENV, BASELINE }

  public static final long DEFAULT_BUDGET_MS = 2000;

  static final String USAGE = """
      usage: partita profile --model-repo DIR --model M [--version V] [--sizes 1,2] [--batches 1,8]
                             [--grouping 1,1] [--providers CPU,CUDA] [--dim NAME=SIZE]... [--budget-ms N]
                             [--host-id ID] [--no-spin] [--json]
                             [--broker HOST:PORT [--topic-prefix P] [--no-baseline]]
             partita profile --env [--host-id ID] [--broker HOST:PORT [--topic-prefix P] [--no-baseline]]
             partita profile --baseline [--compare-grid] [--budget-ms N] [--json] [--broker HOST:PORT [--topic-prefix P]]
        --model-repo DIR   model repository laid out as DIR/<model>/<version>/model.onnx (see docs/models.md)
        --model M          model id (a directory under --model-repo)
        --version V        version id; default: the highest
        --sizes LIST       CPU partition sizes (cores) or GPU counts; default 1,2,4,... and all usable cores
        --batches LIST     batch sizes; default 1,2,4,8,16,32 (or the model's fixed batch)
        --grouping LIST    measure this grouping at once (partitions run concurrently) instead of single sizes
        --providers LIST   execution providers; default: every provider that loads here
        --dim NAME=SIZE    size of a named dynamic input dimension other than the batch
        --budget-ms N      time budget per point after warm-up (default 2000)
        --host-id ID       host id in results (default: the host name)
        --no-spin          idle ONNX Runtime threads sleep instead of spinning (for cores shared with other work)
        --json             one JSON object per point on stdout instead of a table
        --env              print this host's environment as JSON
        --baseline         run the baseline benchmark (hill climbing over threads and batch size)
        --compare-grid     with --baseline: also measure the full grid and report how close the search came
        --broker HOST:PORT also publish to this Kafka cluster: the timing events and this host's environment
        --topic-prefix P   with --broker: prefix of the topics (default partita)
        --no-baseline      with --broker: publish the environment without running the baseline benchmark first
      """;

  public static ProfileOptions parse(String[] args) throws UsageException {
    Mode mode = Mode.MEASURE;
    Path repo = null;
    String model = null;
    String version = null;
    List<Integer> sizes = List.of();
    List<Integer> batches = List.of();
    List<Integer> grouping = List.of();
    List<Provider> providers = List.of();
    Map<String, Long> dims = new LinkedHashMap<>();
    long budget = DEFAULT_BUDGET_MS;
    String hostId = null;
    boolean json = false;
    boolean compareGrid = false;
    boolean spinning = true;
    String broker = null;
    String topicPrefix = null;
    boolean baseline = true;
    int i = 0;
    while (i < args.length) {
      String flag = args[i];
      switch (flag) {
        case "--json" -> json = true;
        case "--env" -> mode = setMode(mode, Mode.ENV, flag);
        case "--baseline" -> mode = setMode(mode, Mode.BASELINE, flag);
        case "--compare-grid" -> compareGrid = true;
        case "--no-spin" -> spinning = false;
        case "--model-repo" -> repo = Path.of(value(args, i++, flag));
        case "--model" -> model = value(args, i++, flag);
        case "--version" -> version = value(args, i++, flag);
        case "--sizes" -> sizes = positiveList(value(args, i++, flag), flag);
        case "--batches" -> batches = positiveList(value(args, i++, flag), flag);
        case "--grouping" -> grouping = positiveList(value(args, i++, flag), flag);
        case "--providers" -> providers = providerList(value(args, i++, flag));
        case "--dim" -> {
          String v = value(args, i++, flag);
          int eq = v.indexOf('=');
          if (eq <= 0) {
            throw new UsageException("--dim: expected NAME=SIZE, got '" + v + "'");
          }
          dims.put(v.substring(0, eq), (long) positive(v.substring(eq + 1), flag));
        }
        case "--budget-ms" -> budget = positive(value(args, i++, flag), flag);
        case "--host-id" -> hostId = value(args, i++, flag);
        case "--broker" -> broker = hostPort(value(args, i++, flag), flag);
        case "--topic-prefix" -> topicPrefix = topicPrefix(value(args, i++, flag));
        case "--no-baseline" -> baseline = false;
        case "--help", "-h" -> throw new UsageException(USAGE);
        default -> throw new UsageException("unknown flag '" + flag + "'\n" + USAGE);
      }
      i++;
    }
    if (mode == Mode.MEASURE) {
      if (repo == null) {
        throw new UsageException("--model-repo is required: the directory holding <model>/<version>/model.onnx");
      }
      if (model == null) {
        throw new UsageException("--model is required: the model id, a directory under " + repo);
      }
    }
    if (compareGrid && mode != Mode.BASELINE) {
      throw new UsageException("--compare-grid only applies with --baseline");
    }
    if (!grouping.isEmpty() && !sizes.isEmpty()) {
      throw new UsageException("--grouping and --sizes cannot be combined: a grouping already says the partition sizes");
    }
    if (broker == null && topicPrefix != null) {
      throw new UsageException("--topic-prefix only applies with --broker");
    }
    if (broker == null && !baseline) {
      throw new UsageException("--no-baseline only applies with --broker (it is about the published environment)");
    }
    return new ProfileOptions(mode, repo, model, version, sizes, batches, grouping, providers, Map.copyOf(dims),
        budget, hostId, json, compareGrid, spinning, broker, topicPrefix == null ? Topics.DEFAULT_PREFIX : topicPrefix,
        baseline);
  }

  private static String hostPort(String text, String flag) throws UsageException {
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
        throw new UsageException(flag + ": expected HOST:PORT[,HOST:PORT...], got '" + text + "'");
      }
    }
    return text;
  }

  private static String topicPrefix(String text) throws UsageException {
    try {
      return new Topics(text).prefix();
    } catch (IllegalArgumentException e) {
      throw new UsageException("--topic-prefix: " + e.getMessage());
    }
  }

  private static Mode setMode(Mode current, Mode wanted, String flag) throws UsageException {
    if (current != Mode.MEASURE && current != wanted) {
      throw new UsageException(flag + " cannot be combined with --" + current.name().toLowerCase(Locale.ROOT));
    }
    return wanted;
  }

  private static String value(String[] args, int i, String flag) throws UsageException {
    if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
      throw new UsageException(flag + " needs a value");
    }
    return args[i + 1];
  }

  private static int positive(String text, String flag) throws UsageException {
    try {
      int v = Integer.parseInt(text.trim());
      if (v < 1) {
        throw new UsageException(flag + ": expected a positive whole number, got '" + text + "'");
      }
      return v;
    } catch (NumberFormatException e) {
      throw new UsageException(flag + ": expected a positive whole number, got '" + text + "'");
    }
  }

  private static List<Integer> positiveList(String text, String flag) throws UsageException {
    List<Integer> values = new ArrayList<>();
    for (String part : text.split(",")) {
      values.add(positive(part, flag));
    }
    return List.copyOf(values);
  }

  private static List<Provider> providerList(String text) throws UsageException {
    List<Provider> out = new ArrayList<>();
    for (String part : text.split(",")) {
      try {
        out.add(Provider.valueOf(part.trim().toUpperCase(Locale.ROOT)));
      } catch (IllegalArgumentException e) {
        throw new UsageException("--providers: unknown provider '" + part + "'; known: CPU, CUDA");
      }
    }
    return List.copyOf(out);
  }
}

package io.partita.worker;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.common.kafka.KafkaSettings;
import io.partita.common.kafka.RequestTopics;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The inference worker's settings, built once at start.
 *
 * @param kafka how it reaches Kafka and encodes records ({@code kafka.*}, {@code topic.prefix}, {@code serde.*})
 * @param hostId this host's id in plans, slot status and replies ({@code host.id}, default the host name)
 * @param modelRepository the model repository served ({@code model.repo}); null for a worker fed by the catalog
 *     ({@code worker.models.from=catalog}) without one
 * @param intraOpThreads ONNX Runtime threads of an unpinned slot; 0 = all cores ({@code worker.threads})
 * @param cuda run the default slots on the CUDA provider when it loads ({@code worker.cuda})
 * @param slots where the slots come from and how they share
 * @param batching how requests are batched and how many may be open
 * @param operation status, metrics and shutdown
 */
public record WorkerConfig(
    KafkaSettings kafka, String hostId, Path modelRepository, int intraOpThreads, boolean cuda, SlotSettings slots, BatchSettings batching, Operation operation) {

  /**
   * @param partitions partition sizes cut from the usable CPUs for every model version, one slot each
   *     ({@code worker.partitions}, e.g. {@code 1,1}); empty = one unpinned slot per version
   * @param assignmentFile a JSON or YAML list of slot assignments, instead of the above ({@code worker.assignments})
   * @param gpu CUDA device of the default slots when {@code worker.cuda} is on ({@code worker.gpu}, default 0)
   * @param shareSessions one-core slots of one model version share one session ({@code worker.sessions.shared})
   * @param weightBudgetBytes memory budget for mounted weight files per slot; 0 = none ({@code worker.weights.budget.bytes})
   * @param followPlan replace the start-up slots by the assignments of {@code <prefix>.plan.assignments} for this
   *     host as they arrive and change ({@code worker.follow-plan}, default false)
   * @param spin idle intra-op threads of pinned slots spin ({@code worker.spin}, default on); set it as the profile
   *     was measured ({@code profiler.spin}): see {@code io.partita.runtime.SlotConfig#pinned}
   * @param modelCache where model and weight files are fetched and their sha256 checked before they are loaded
   *     ({@code worker.model.cache.dir}); empty: files are opened in the model repository
   * @param fromCatalog the models served are the catalog's ({@code worker.models.from=catalog}), their files fetched
   *     by the URIs it names into the cache, instead of a scan of {@code model.repo} ({@code repository}, the default)
   * @param warmUpRequests synthetic requests each slot runs when it opens, before the worker says it is ready and
   *     before a slot opened for a new plan takes requests: the JIT's warm-up of the serving path
   *     ({@code worker.warm-up.requests}, default 300; 0 = none)
   */
  public record SlotSettings(List<Integer> partitions, Path assignmentFile, int gpu, boolean shareSessions, long weightBudgetBytes,
                             boolean followPlan, boolean spin, Optional<Path> modelCache, boolean fromCatalog,
                             int warmUpRequests) {
    public SlotSettings {
      partitions = List.copyOf(partitions);
    }
  }

  /**
   * @param maxBatch largest batch in rows, unless an assignment says otherwise ({@code worker.batch.max}, default 32)
   * @param maxDelayMs how long a batch may wait for more requests ({@code worker.batch.delay.ms}, default 2)
   * @param maxOpen requests read but not yet answered before the worker stops fetching ({@code worker.open.max}, default 1024)
   * @param acrossWeightFiles requests of different weight files of one base model share a batch when the model's graph
   *     qualifies for the per-row LoRA form ({@code worker.batch.across-weight-files}, default on; see docs/models.md)
   */
  public record BatchSettings(int maxBatch, long maxDelayMs, int maxOpen, boolean acrossWeightFiles) {}

  /**
   * @param metricsPort port of {@code GET /metrics}; 0 = no endpoint ({@code worker.metrics.port})
   * @param statusIntervalMs how often every slot status is published even without a change ({@code worker.status.interval.ms})
   * @param drainTimeoutMs how long stopping (or giving up partitions) waits for open requests to be answered ({@code worker.drain.timeout.ms})
   * @param groupInstanceId static membership of the request consumer group ({@code worker.group.instance.id}; empty =
   *     dynamic): a worker restarted after a crash with the same id takes its old partitions back at once instead
   *     of waiting out the dead member's session timeout. Unique per worker process; {@code partita local} sets it.
   * @param requestPartitions partitions a base model's request topic is created with when missing
   *     ({@code topic.requests.partitions}, default 4); the planner grows it with the instances
   * @param assignment how the request topics' partitions are shared out among the workers ({@code worker.assignment})
   * @param sessionTimeoutMs how long the group waits for a worker that stopped heartbeating (killed, frozen, cut off)
   *     before its partitions, with their unanswered requests, go to the others ({@code worker.session.timeout.ms},
   *     default 10000; Kafka's consumer default, 45 s, is a long stall for requests with deadlines). A worker stopped
   *     with SIGTERM leaves at once whatever this says. The brokers' {@code group.min.session.timeout.ms} (6 s by
   *     default) bounds it from below.
   */
  public record Operation(int metricsPort, long statusIntervalMs, long drainTimeoutMs, String groupInstanceId,
      int requestPartitions, Assignment assignment, long sessionTimeoutMs) {}

  /** How the request topics' partitions are shared out among the workers of the group ({@code worker.assignment}). */
  public enum Assignment {
    /**
     * In proportion to the capacity the plan gives each worker's ready slots of the base model
     * (the default): a host planned at a third of another's throughput gets a third of the
     * partitions, so a third of the requests.
     */
    CAPACITY,
    /** Evenly by count, whatever each worker can do (Kafka's cooperative-sticky assignor). */
    EVEN;

    static Assignment parse(String value) {
      try {
        return valueOf(value.strip().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new ConfigException(ASSIGNMENT_KEY + "=" + value + ": use capacity (partitions in proportion to each worker's"
            + " planned capacity) or even (the same number of partitions per worker)");
      }
    }
  }

  public static final String ASSIGNMENT_KEY = "worker.assignment";

  /** Synthetic requests each slot runs when it opens ({@link SlotSettings#warmUpRequests}). */
  public static final String WARM_UP_KEY = "worker.warm-up.requests";

  /** Where the served models come from: {@code repository} (a scan of model.repo) or {@code catalog}. */
  public static final String MODELS_FROM_KEY = "worker.models.from";
  /** The local directory model files are fetched into (by sha256) and checked before loading. */
  public static final String CACHE_KEY = "worker.model.cache.dir";

  public static WorkerConfig from(Settings settings) {
    KafkaSettings kafka = KafkaSettings.from(settings);
    String from = settings.string(MODELS_FROM_KEY, "repository").strip();
    if (!from.equals("repository") && !from.equals("catalog")) {
      throw new ConfigException(MODELS_FROM_KEY + "=" + from + ": use repository (scan model.repo) or catalog (serve the"
          + " catalog's models, fetching their files into worker.model.cache.dir)");
    }
    boolean fromCatalog = from.equals("catalog");
    String repo = settings.string("model.repo", null);
    String cache = settings.string(CACHE_KEY, null);
    if (repo == null && !fromCatalog) {
      throw new ConfigException("model.repo: missing; set it to the model repository directory, or set " + MODELS_FROM_KEY
          + "=catalog and " + CACHE_KEY + " to serve the catalog's models from their URIs");
    }
    if (fromCatalog && (cache == null || cache.isBlank())) {
      throw new ConfigException(CACHE_KEY + ": missing; " + MODELS_FROM_KEY + "=catalog fetches model files into it: set it"
          + " to a local directory");
    }
    String assignments = settings.string("worker.assignments", null);
    List<Integer> partitions = partitions(settings.string("worker.partitions", ""));
    if (assignments != null && !partitions.isEmpty()) {
      throw new ConfigException("worker.partitions and worker.assignments both set; use one (the file says everything the sizes do)");
    }
    return new WorkerConfig(
        kafka,
        settings.string("host.id", defaultHostId()),
        repo == null ? null : Path.of(repo),
        settings.integer("worker.threads", 0, 0, 4096),
        settings.bool("worker.cuda", false),
        new SlotSettings(
            partitions,
            assignments == null ? null : Path.of(assignments),
            settings.integer("worker.gpu", 0, 0, 1024),
            settings.bool("worker.sessions.shared", true),
            settings.longValue("worker.weights.budget.bytes", 0, 0, Long.MAX_VALUE),
            settings.bool("worker.follow-plan", false),
            settings.bool("worker.spin", true),
            Optional.ofNullable(cache).filter(c -> !c.isBlank()).map(Path::of),
            fromCatalog,
            settings.integer(WARM_UP_KEY, 300, 0, 100_000)),
        new BatchSettings(
            settings.integer("worker.batch.max", 32, 1, 1 << 20),
            settings.longValue("worker.batch.delay.ms", 2, 0, 60_000),
            settings.integer("worker.open.max", 1024, 1, 1 << 20),
            settings.bool("worker.batch.across-weight-files", true)),
        new Operation(
            settings.integer("worker.metrics.port", 0, 0, 65535),
            settings.longValue("worker.status.interval.ms", 10_000, 100, 3_600_000),
            settings.longValue("worker.drain.timeout.ms", 10_000, 0, 600_000),
            settings.string("worker.group.instance.id", "").strip(),
            settings.integer(RequestTopics.MIN_PARTITIONS_KEY, RequestTopics.DEFAULT_MIN_PARTITIONS, 1, 100_000),
            Assignment.parse(settings.string(ASSIGNMENT_KEY, "capacity")),
            settings.longValue("worker.session.timeout.ms", 10_000, 1_000, 3_600_000)));
  }

  static List<Integer> partitions(String value) {
    List<Integer> out = new ArrayList<>();
    if (value.isBlank()) {
      return out;
    }
    for (String part : value.split(",")) {
      try {
        int size = Integer.parseInt(part.strip());
        if (size < 1) {
          throw new NumberFormatException();
        }
        out.add(size);
      } catch (NumberFormatException e) {
        throw new ConfigException("worker.partitions=" + value + ": '" + part.strip()
            + "' is not a partition size; give CPU counts separated by commas, e.g. 1,1 or 2");
      }
    }
    return out;
  }

  public static String defaultHostId() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }
}

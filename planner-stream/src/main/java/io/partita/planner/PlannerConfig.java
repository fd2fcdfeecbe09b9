package io.partita.planner;

import io.partita.common.Topics;
import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.common.kafka.KafkaSettings;
import io.partita.common.kafka.RequestTopics;
import io.partita.common.serde.Codecs;
import io.partita.planner.plan.MeasureSettings;
import io.partita.planner.plan.PlanSettings;
import io.partita.planner.plan.ServingSettings;
import io.partita.planning.grouping.GroupingObjective;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The planner's settings, built once at start.
 *
 * @param kafka how it reaches Kafka and encodes records ({@code kafka.*}, {@code topic.prefix}, {@code serde.*});
 *     every {@code kafka.*} setting is passed to Kafka Streams last (it wins)
 * @param streams how it runs in Kafka Streams: application id, state, standbys, membership
 * @param debounce {@code planner.debounce.ms} (default 1000): changes within one interval are planned together
 * @param topicReplication {@code topics.replication}: replication of the topics the planner creates when missing
 *     (default 3, capped at the number of brokers)
 * @param plan the planning choices ({@code planner.objective}, {@code planner.buffer.bytes},
 *     {@code planner.buffer.threshold.bytes}, {@code planner.default.rate})
 * @param requestPartitions {@code topic.requests.partitions}: fewest partitions of a base model's request
 *     topic (default 4); the planner grows the topic to four partitions per planned slot of the base model
 * @param metricsPort port of {@code GET /metrics}; 0 = no endpoint ({@code planner.metrics.port})
 * @param hostWatchMs {@code planner.hosts.watch.ms} (default 2000; 0 = off): how often the host watcher
 *     looks at the workers' consumer group and records which hosts' workers are in it ({@code <prefix>.hosts.liveness})
 */
public record PlannerConfig(
    KafkaSettings kafka,
    Streams streams,
    Duration debounce,
    short topicReplication,
    PlanSettings plan,
    int requestPartitions,
    int metricsPort,
    long hostWatchMs) {

  /**
   * How the planner runs as a Kafka Streams application.
   *
   * @param applicationId {@code planner.application.id} (default {@code <prefix>-planner}); also the
   *     prefix of the changelog topics, so two planners with one id share (and split) one plan
   * @param stateDir {@code planner.state.dir} (default {@code <tmp>/partita-planner})
   * @param standbyReplicas {@code planner.standby.replicas} (default 0)
   * @param replicationFactor {@code planner.replication.factor} of changelog and internal topics (default -1:
   *     the broker's default)
   * @param groupInstanceId {@code planner.group.instance.id} (default empty: dynamic membership): static
   *     membership of the Streams group (each stream thread's consumer gets it with {@code -<thread>}
   *     appended), so a planner restarted after a crash takes its old member's tasks at once instead of
   *     waiting out the dead member's session timeout. Unique per planner process; {@code partita local} sets it.
   */
  public record Streams(String applicationId, Path stateDir, int standbyReplicas, int replicationFactor,
      String groupInstanceId) {}

  public static PlannerConfig from(Settings settings) {
    KafkaSettings kafka = KafkaSettings.from(settings);
    String prefix = kafka.topicPrefix();
    Topics topics = kafka.topics();
    String objective = settings.string("planner.objective", "throughput").toUpperCase(Locale.ROOT);
    GroupingObjective goal;
    try {
      goal = GroupingObjective.valueOf(objective);
    } catch (IllegalArgumentException e) {
      throw new ConfigException("planner.objective=" + objective.toLowerCase(Locale.ROOT)
          + ": use throughput or latency");
    }
    PlanSettings plan;
    try {
      plan = new PlanSettings(topics, goal,
          settings.longValue("planner.buffer.bytes", 0, 0, Long.MAX_VALUE),
          settings.longValue("planner.buffer.threshold.bytes", Long.MAX_VALUE, 0, Long.MAX_VALUE),
          decimal(settings, "planner.default.rate", 1.0),
          decimal(settings, "planner.hysteresis", PlanSettings.DEFAULT_HYSTERESIS),
          new MeasureSettings(
              settings.bool("planner.measure.enabled", MeasureSettings.DEFAULTS.enabled()),
              decimal(settings, "planner.measure.margin", MeasureSettings.DEFAULTS.margin()),
              settings.longValue("planner.measure.interval.ms",
                  MeasureSettings.DEFAULTS.intervalMs(), 0, Long.MAX_VALUE),
              settings.longValue("planner.measure.timeout.ms",
                  MeasureSettings.DEFAULTS.timeoutMs(), 1, Long.MAX_VALUE),
              settings.longValue("planner.measure.retry.ms",
                  MeasureSettings.DEFAULTS.retryMs(), 0, Long.MAX_VALUE),
              settings.longValue("planner.measure.budget.ms",
                  MeasureSettings.DEFAULTS.budgetMs(), 0, 3_600_000),
              settings.longValue("planner.measure.busy.retry.ms",
                  MeasureSettings.DEFAULTS.busyRetryMs(), 0, Long.MAX_VALUE)),
          new ServingSettings(
              settings.bool("planner.serving.enabled", ServingSettings.DEFAULTS.enabled()),
              settings.longValue("planner.serving.full.busy.ms",
                  ServingSettings.DEFAULTS.fullBusyMs(), 1, Long.MAX_VALUE),
              settings.longValue("planner.serving.full.items",
                  ServingSettings.DEFAULTS.fullItems(), 1, Long.MAX_VALUE)),
          settings.integer("planner.mapping.max-pools", PlanSettings.DEFAULT_MAPPING_POOL_LIMIT, 0, 1_000_000),
          settings.integer("planner.routes.on-demand.max", PlanSettings.DEFAULT_ROUTE_ON_DEMAND_LIMIT, 0, 1_000_000),
          settings.integer("planner.default.partitions.max", PlanSettings.DEFAULT_PARTITIONS_LIMIT, 1, 1_000_000),
          decimal(settings, "planner.mapping.drift", PlanSettings.DEFAULT_MAPPING_DRIFT));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(e.getMessage());
    }
    return new PlannerConfig(
        kafka,
        new Streams(
            settings.string("planner.application.id", prefix + "-planner"),
            Path.of(settings.string("planner.state.dir",
                Path.of(System.getProperty("java.io.tmpdir"), "partita-planner").toString())),
            settings.integer("planner.standby.replicas", 0, 0, 16),
            settings.integer("planner.replication.factor", -1, -1, 16),
            settings.string("planner.group.instance.id", "").strip()),
        Duration.ofMillis(settings.longValue("planner.debounce.ms", 1000, 1, 3_600_000)),
        (short) settings.integer("topics.replication", 3, 1, 16),
        plan,
        settings.integer(RequestTopics.MIN_PARTITIONS_KEY,
            RequestTopics.DEFAULT_MIN_PARTITIONS, 1, 100_000),
        settings.integer("planner.metrics.port", 0, 0, 65_535),
        settings.longValue("planner.hosts.watch.ms", 2_000, 0, 3_600_000));
  }

  private static double decimal(Settings settings, String key, double fallback) {
    String value = settings.string(key, null);
    if (value == null) {
      return fallback;
    }
    try {
      return Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new ConfigException(key + "=" + value + ": not a number");
    }
  }

  public Topics topics() {
    return plan.topics();
  }

  /** How records are encoded ({@link KafkaSettings#codecs}). */
  public Codecs codecs() {
    return kafka.codecs();
  }

  /** The Kafka Streams configuration: exactly_once_v2, standbys, the state directory, then {@code kafka.*}. */
  public Properties streamsProperties() {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, streams.applicationId());
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, streams.standbyReplicas());
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, streams.replicationFactor());
    p.put(StreamsConfig.STATE_DIR_CONFIG, streams.stateDir().toString());
    if (!streams.groupInstanceId().isEmpty()) {
      p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), streams.groupInstanceId());
    }
    // A standby planner takes the tasks of an active one that died (killed, frozen, cut off) once the
    // group gives up on it: 10 s rather than Kafka's 45 s (kafka.main.consumer.session.timeout.ms
    // overrides). A planner that stops cleanly leaves the group at once whatever this says.
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), "10000");
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), "2000");
    p.putAll(kafka.clients());
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    return p;
  }
}

package io.partita.profiler;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.common.kafka.KafkaSettings;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.idle.IdleSettings;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The profiler service's settings, built once at start from {@link Settings}.
 *
 * @param kafka how it reaches Kafka and encodes records ({@code kafka.*}, {@code topic.prefix}, {@code serde.*})
 * @param hostId this host's id in environments and timings ({@code host.id}, default the host name)
 * @param modelRepository the model repository requests name models of ({@code model.repo}, required)
 * @param measuring how each point is measured
 * @param probing what is published about the host, and how often it is looked at again
 * @param dims sizes of named dynamic input dimensions past the batch, for every model this profiler
 *     measures ({@code profiler.dims}, {@code NAME=SIZE[,NAME=SIZE...]}, as {@code partita profile
 *     --dim} gives them; default none: a model with such a dimension fails its points, saying so)
 * @param idle when the host's serving slots count as idle enough to measure, and how long a request
 *     waits for that ({@code profiler.idle.*}, see {@link IdleSettings})
 * @param metricsPort port of {@code GET /metrics}; 0 = no endpoint ({@code profiler.metrics.port})
 */
public record ProfilerConfig(
    KafkaSettings kafka,
    String hostId,
    Path modelRepository,
    Measuring measuring,
    Probing probing,
    Map<String, Long> dims,
    IdleSettings idle,
    int metricsPort) {

  /**
   * How each point is measured.
   *
   * @param budgetMillis time budget per point when a request gives none ({@code profiler.budget.ms},
   *     default 2000)
   * @param measureMemory measure each instance's memory in a child JVM ({@code profiler.memory},
   *     default on)
   * @param spinning idle ONNX Runtime threads spin ({@code profiler.spin}, default on; off for hosts
   *     whose cores run other work)
   */
  public record Measuring(long budgetMillis, boolean measureMemory, boolean spinning) {}

  /**
   * What is published about the host.
   *
   * @param baseline run the baseline benchmark before publishing the environment
   *     ({@code profiler.baseline}, on/off, default on)
   * @param baselineBudgetMillis time budget per point of the baseline search
   *     ({@code profiler.baseline.budget.ms}, default 200)
   * @param reprobeMillis how often the host is probed again, and its environment republished when it
   *     changed ({@code profiler.reprobe.ms}, default 60000; 0 = never)
   */
  public record Probing(boolean baseline, long baselineBudgetMillis, long reprobeMillis) {}

  public static final long DEFAULT_BUDGET_MS = 2000;
  public static final long DEFAULT_BASELINE_BUDGET_MS = 200;
  public static final long DEFAULT_REPROBE_MS = 60_000;
  public static final String DIMS_KEY = "profiler.dims";

  public ProfilerConfig {
    dims = Map.copyOf(dims);
  }

  public static ProfilerConfig from(Settings settings) {
    KafkaSettings kafka = KafkaSettings.from(settings);
    String repo = settings.string("model.repo", null);
    if (repo == null) {
      throw new ConfigException("model.repo: missing; set it to the model repository directory (--model-repo)");
    }
    return new ProfilerConfig(
        kafka,
        settings.string("host.id", HostProbe.live().hostname()),
        Path.of(repo),
        new Measuring(
            settings.longValue("profiler.budget.ms", DEFAULT_BUDGET_MS, 1, 3_600_000),
            settings.bool("profiler.memory", true),
            settings.bool("profiler.spin", true)),
        new Probing(
            settings.bool("profiler.baseline", true),
            settings.longValue("profiler.baseline.budget.ms", DEFAULT_BASELINE_BUDGET_MS, 1, 600_000),
            settings.longValue("profiler.reprobe.ms", DEFAULT_REPROBE_MS, 0, Long.MAX_VALUE)),
        dims(settings.string(DIMS_KEY, "")),
        idle(settings),
        settings.integer("profiler.metrics.port", 0, 0, 65_535));
  }

  /** {@code NAME=SIZE[,NAME=SIZE...]}, each size a whole number from 1; blank: none. */
  static Map<String, Long> dims(String text) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (String part : text.split(",")) {
      String item = part.trim();
      if (item.isEmpty()) {
        continue;
      }
      int eq = item.indexOf('=');
      long size = -1;
      if (eq > 0) {
        try {
          size = Long.parseLong(item.substring(eq + 1).trim());
        } catch (NumberFormatException e) {
          size = -1;
        }
      }
      if (size < 1) {
        throw new ConfigException(DIMS_KEY + "=" + text + ": '" + item + "' is not NAME=SIZE with a size of at least 1;"
            + " e.g. " + DIMS_KEY + "=width=160");
      }
      out.put(item.substring(0, eq).trim(), size);
    }
    return out;
  }

  private static IdleSettings idle(Settings settings) {
    String rateKey = "profiler.idle.max-rate";
    String rate = settings.string(rateKey, Double.toString(IdleSettings.DEFAULT_MAX_RATE));
    double maxRate;
    try {
      maxRate = Double.parseDouble(rate);
    } catch (NumberFormatException e) {
      throw new ConfigException(rateKey + "=" + rate + ": not a number; give requests per second, e.g. 1.0");
    }
    try {
      return new IdleSettings(
          settings.bool("profiler.idle.check", true),
          settings.integer("profiler.idle.max-in-flight", IdleSettings.DEFAULT_MAX_IN_FLIGHT, 0, Integer.MAX_VALUE),
          maxRate,
          settings.longValue("profiler.idle.wait.ms", IdleSettings.DEFAULT_WAIT_MS, 0, 86_400_000),
          settings.longValue("profiler.idle.stale.ms", IdleSettings.DEFAULT_STALE_MS, 1, Long.MAX_VALUE));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(e.getMessage());
    }
  }
}

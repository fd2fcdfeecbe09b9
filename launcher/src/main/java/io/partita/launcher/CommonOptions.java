package io.partita.launcher;

import io.partita.common.config.Settings;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * Options every service command shares: where Kafka is, the topic prefix, an optional properties
 * file, and {@code --set key=value} for any other setting. Settings layer as defaults, file,
 * {@code PARTITA_*} environment, then flags (last wins).
 */
final class CommonOptions {
  @Option(names = "--bootstrap", paramLabel = "HOST:PORT", description = "Kafka bootstrap servers of an existing cluster.")
  String bootstrap;

  @Option(names = "--topic-prefix", paramLabel = "PREFIX", description = "Prefix of every topic (default: partita).")
  String topicPrefix;

  @Option(names = "--config", paramLabel = "FILE", description = "A properties file of settings (kafka.* pass to the Kafka clients).")
  Path config;

  @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Any setting, e.g. --set kafka.security.protocol=SASL_SSL.")
  List<String> sets = List.of();

  Settings settings(Map<String, String> defaults, Map<String, String> flags) {
    Map<String, String> overrides = new LinkedHashMap<>();
    if (bootstrap != null) {
      overrides.put("kafka.bootstrap.servers", bootstrap);
    }
    if (topicPrefix != null) {
      overrides.put("topic.prefix", topicPrefix);
    }
    for (String set : sets) {
      int eq = set.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--set " + set + ": expected KEY=VALUE");
      }
      overrides.put(set.substring(0, eq).strip(), set.substring(eq + 1).strip());
    }
    flags.forEach((k, v) -> {
      if (v != null) {
        overrides.put(k, v);
      }
    });
    return Settings.builder().defaults(defaults).file(config).environment(System.getenv()).overrides(overrides).build();
  }
}

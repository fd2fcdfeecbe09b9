package io.partita.common.kafka;

import io.partita.common.Topics;
import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.common.serde.Codecs;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * How a service reaches Kafka and encodes its records, the part of every service's config that is
 * the same in all of them; parsed and checked once, here, so every service refuses the same bad
 * value with the same message naming the key.
 *
 * @param bootstrapServers the brokers to start from ({@code kafka.bootstrap.servers}, required; a
 *     comma-separated list of {@code host:port})
 * @param topicPrefix prefix of every topic ({@code topic.prefix}, default {@value Topics#DEFAULT_PREFIX};
 *     letters, digits, '.', '_' or '-')
 * @param clients every setting under {@code kafka.}, prefix removed, for the Kafka clients: security
 *     ({@code kafka.security.protocol}, {@code kafka.sasl.*}, {@code kafka.ssl.*}), timeouts, sizes
 * @param codecs how records are encoded ({@code serde.mode}, {@code serde.registry.*})
 */
public record KafkaSettings(String bootstrapServers, String topicPrefix, Properties clients, Codecs codecs) {
  public static final String BOOTSTRAP_KEY = "kafka.bootstrap.servers";
  public static final String PREFIX_KEY = "topic.prefix";
  public static final String SECURITY_PROTOCOL_KEY = "kafka.security.protocol";

  /** Kafka's security protocols ({@code org.apache.kafka.common.security.auth.SecurityProtocol}). */
  private static final Set<String> PROTOCOLS = Set.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");

  public KafkaSettings {
    checkBootstrap(bootstrapServers);
    checkPrefix(topicPrefix);
    clients = copy(clients);
    String protocol = clients.getProperty("security.protocol");
    if (protocol != null && !PROTOCOLS.contains(protocol.strip().toUpperCase(Locale.ROOT))) {
      throw new ConfigException(SECURITY_PROTOCOL_KEY + "=" + protocol + ": not a Kafka security protocol; use one of "
          + PROTOCOLS.stream().sorted().toList());
    }
  }

  /** The settings every service reads: {@code kafka.*}, {@code topic.prefix} and {@code serde.*}. */
  public static KafkaSettings from(Settings settings) {
    Properties clients = settings.kafka();
    String bootstrap = clients.getProperty("bootstrap.servers");
    if (bootstrap == null || bootstrap.isBlank()) {
      throw new ConfigException(BOOTSTRAP_KEY + ": missing; set it to host:port of a broker (--bootstrap)");
    }
    return new KafkaSettings(bootstrap.strip(), settings.string(PREFIX_KEY, Topics.DEFAULT_PREFIX), clients,
        Codecs.from(settings));
  }

  /** The topic names under {@link #topicPrefix}. */
  public Topics topics() {
    return new Topics(topicPrefix);
  }

  /** A copy: a caller adding its own client settings changes no one else's. */
  @Override
  public Properties clients() {
    return copy(clients);
  }

  /** {@link KafkaClients#base}: the client settings and the bootstrap servers (admin clients). */
  public Properties base() {
    return KafkaClients.base(bootstrapServers, clients);
  }

  /** {@link KafkaClients#producer}: idempotent, {@code acks=all}, string keys and byte values. */
  public Properties producer() {
    return KafkaClients.producer(bootstrapServers, clients);
  }

  /** {@link KafkaClients#consumer}: no auto-commit, string keys and byte values. */
  public Properties consumer() {
    return KafkaClients.consumer(bootstrapServers, clients);
  }

  /** With secrets masked ({@code sasl.jaas.config}, passwords), for the one log line at start. */
  @Override
  public String toString() {
    Map<String, String> shown = new TreeMap<>();
    clients.forEach((k, v) -> shown.put(k.toString(), Settings.isSecret(k.toString()) ? "****" : v.toString()));
    return "KafkaSettings[bootstrapServers=" + bootstrapServers + ", topicPrefix=" + topicPrefix + ", clients=" + shown + "]";
  }

  private static void checkBootstrap(String servers) {
    if (servers == null || servers.isBlank()) {
      throw new ConfigException(BOOTSTRAP_KEY + ": missing; set it to host:port of a broker (--bootstrap)");
    }
    for (String part : servers.split(",")) {
      String server = part.strip();
      if (server.isEmpty()) {
        continue; // Kafka skips empty entries too
      }
      int colon = server.lastIndexOf(':');
      String port = colon < 0 ? "" : server.substring(colon + 1);
      boolean valid = colon > 0 && !port.isEmpty() && port.length() <= 5 && port.chars().allMatch(Character::isDigit)
          && Integer.parseInt(port) <= 65535;
      if (!valid) {
        throw new ConfigException(BOOTSTRAP_KEY + "=" + servers + ": '" + server
            + "' is not host:port; give brokers as host:port separated by commas, e.g. broker1:9092,broker2:9092");
      }
    }
  }

  private static void checkPrefix(String prefix) {
    if (prefix == null || prefix.isBlank()) {
      throw new ConfigException(PREFIX_KEY + ": empty; leave it unset for " + Topics.DEFAULT_PREFIX + " or give a name");
    }
    try {
      new Topics(prefix);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(PREFIX_KEY + "=" + prefix + ": " + e.getMessage());
    }
  }

  private static Properties copy(Properties from) {
    Properties p = new Properties();
    if (from != null) {
      p.putAll(from);
    }
    return p;
  }
}

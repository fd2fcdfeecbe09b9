package io.partita.gateway;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import java.nio.file.Path;
import java.util.Properties;
import java.util.UUID;

/**
 * The gateway's settings, built once at start.
 *
 * @param bootstrapServers Kafka bootstrap servers ({@code kafka.bootstrap.servers})
 * @param topicPrefix prefix of every topic ({@code topic.prefix})
 * @param gatewayId names this gateway's reply topic ({@code gateway.id}, default random)
 * @param modelRepository the model repository whose service models it offers ({@code model.repo})
 * @param httpPort HTTP port; 0 picks a free one ({@code http.port}, default 8080)
 * @param timeoutMs how long an infer call waits for its reply by default ({@code gateway.timeout.ms})
 * @param maxBodyBytes largest request body accepted ({@code gateway.max.body.bytes})
 * @param kafka extra Kafka client settings (everything under {@code kafka.})
 * @param codecs how records are encoded ({@code serde.mode})
 */
public record GatewayConfig(
    String bootstrapServers, String topicPrefix, String gatewayId, Path modelRepository, int httpPort,
    long timeoutMs, long maxBodyBytes, Properties kafka, io.partita.common.serde.Codecs codecs) {

  public static GatewayConfig from(Settings settings) {
    Properties kafka = settings.kafka();
    String bootstrap = kafka.getProperty("bootstrap.servers");
    if (bootstrap == null) {
      throw new ConfigException("kafka.bootstrap.servers: missing; set it to host:port of a broker");
    }
    String repo = settings.string("model.repo", null);
    if (repo == null) {
      throw new ConfigException("model.repo: missing; set it to the model repository directory");
    }
    return new GatewayConfig(
        bootstrap,
        settings.string("topic.prefix", "partita"),
        settings.string("gateway.id", "gateway-" + UUID.randomUUID().toString().substring(0, 8)),
        Path.of(repo),
        settings.integer("http.port", 8080, 0, 65535),
        settings.longValue("gateway.timeout.ms", 30_000, 1, 3_600_000),
        settings.longValue("gateway.max.body.bytes", 16L << 20, 1024, 2L << 30),
        kafka,
        io.partita.common.serde.Codecs.from(settings));
  }
}

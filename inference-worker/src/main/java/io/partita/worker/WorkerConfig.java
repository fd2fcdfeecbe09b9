package io.partita.worker;

import io.partita.common.config.Settings;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The inference worker's settings, built once at start.
 *
 * @param bootstrapServers Kafka bootstrap servers ({@code kafka.bootstrap.servers})
 * @param topicPrefix prefix of every topic ({@code topic.prefix}, default partita)
 * @param hostId this host's id in plans and replies ({@code host.id}, default the host name)
 * @param modelRepository the model repository served ({@code model.repo})
 * @param intraOpThreads ONNX Runtime threads per session; 0 = all cores ({@code worker.threads})
 * @param cuda try the CUDA provider ({@code worker.cuda})
 * @param kafka extra Kafka client settings (everything under {@code kafka.})
 * @param codecs how records are encoded ({@code serde.mode})
 */
public record WorkerConfig(
    String bootstrapServers, String topicPrefix, String hostId, Path modelRepository, int intraOpThreads, boolean cuda, Properties kafka, io.partita.common.serde.Codecs codecs) {

  public static WorkerConfig from(Settings settings) {
    Properties kafka = settings.kafka();
    String bootstrap = kafka.getProperty("bootstrap.servers");
    if (bootstrap == null) {
      throw new io.partita.common.config.ConfigException("kafka.bootstrap.servers: missing; set it to host:port of a broker");
    }
    String repo = settings.string("model.repo", null);
    if (repo == null) {
      throw new io.partita.common.config.ConfigException("model.repo: missing; set it to the model repository directory");
    }
    return new WorkerConfig(
        bootstrap,
        settings.string("topic.prefix", "partita"),
        settings.string("host.id", defaultHostId()),
        Path.of(repo),
        settings.integer("worker.threads", 0, 0, 4096),
        settings.bool("worker.cuda", false),
        kafka,
        io.partita.common.serde.Codecs.from(settings));
  }

  public static String defaultHostId() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      return "localhost";
    }
  }
}

package io.partita.cluster;

import io.partita.testkit.KafkaFixture;
import java.util.Locale;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The Kafka of the cluster tests that need just one: a broker from the official {@code apache/kafka}
 * image through Testcontainers when a Docker engine is available, the in-JVM KRaft broker of
 * {@link KafkaFixture} otherwise. Started once per JVM.
 *
 * <p>{@code -Dpartita.kafka=docker} insists on the container (and fails without Docker);
 * {@code -Dpartita.kafka=jvm} always uses the in-JVM broker; unset, Docker is used when present.
 * {@code -Dpartita.kafka.image} picks the image (default {@value #DEFAULT_IMAGE}).
 */
public final class ClusterKafka implements BeforeAllCallback {
  static final String DEFAULT_IMAGE = "apache/kafka:4.3.1"; // the brokers of the Kafka clients Partita uses

  /** Where the broker runs. */
  enum Kind { TESTCONTAINERS, IN_JVM }

  private static Kind kind;
  private static KafkaContainer container;
  private static String reason;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
    context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
        .getOrComputeIfAbsent(ClusterKafka.class.getName(), k -> new Closer());
  }

  private static final class Closer implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    @Override
    public void close() {
      stop();
    }
  }

  static synchronized void start() throws Exception {
    if (kind != null) {
      return;
    }
    String wanted = System.getProperty("partita.kafka", "auto").toLowerCase(Locale.ROOT);
    boolean docker = !wanted.equals("jvm") && dockerAvailable();
    if (wanted.equals("docker") && !docker) {
      throw new IllegalStateException("-Dpartita.kafka=docker, but no Docker engine is available to Testcontainers");
    }
    if (docker) {
      KafkaContainer kafka = new KafkaContainer(DockerImageName.parse(System.getProperty("partita.kafka.image", DEFAULT_IMAGE)));
      kafka.start();
      container = kafka;
      kind = Kind.TESTCONTAINERS;
      reason = "Docker engine available: Testcontainers " + kafka.getDockerImageName();
    } else {
      KafkaFixture.start();
      kind = Kind.IN_JVM;
      reason = wanted.equals("jvm") ? "-Dpartita.kafka=jvm" : "no Docker engine: in-JVM KRaft broker";
    }
  }

  static boolean dockerAvailable() {
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static synchronized void stop() {
    if (container != null) {
      container.stop();
      container = null;
    }
    kind = null;
  }

  static synchronized String bootstrapServers() {
    if (kind == null) {
      throw new IllegalStateException("ClusterKafka not started: add @ExtendWith(ClusterKafka.class)");
    }
    return kind == Kind.TESTCONTAINERS ? container.getBootstrapServers() : KafkaFixture.bootstrapServers();
  }

  static synchronized Kind kind() {
    return kind;
  }

  /** Why this kind was chosen, for test output. */
  static synchronized String reason() {
    return reason;
  }
}

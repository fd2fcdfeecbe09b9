package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.Settings;
import io.partita.launcher.cluster.EnvFile;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The shared settings file: parsed as docker-compose reads an env_file, broker variables named as
 * the apache/kafka image names them, and the copy the launcher carries is compose's file.
 */
class EnvFileTest {
  private static final Path COMPOSE = Path.of(System.getProperty("partita.compose.dir", "../compose")).toAbsolutePath().normalize();

  @Test
  void shouldReadNameValueLinesSkippingCommentsAndNameABadLine() {
    Map<String, String> env = EnvFile.parse("# a comment\n\nPARTITA_TOPIC_PREFIX=partita\nKAFKA_X= a=b \n", "f.env");

    assertThat(env).containsExactly(Map.entry("PARTITA_TOPIC_PREFIX", "partita"), Map.entry("KAFKA_X", "a=b"));
    assertThatThrownBy(() -> EnvFile.parse("A=1\nnot a setting\n", "f.env"))
        .hasMessage("f.env line 2: expected NAME=VALUE, got 'not a setting'");
  }

  @Test
  void shouldNameBrokerSettingsAsTheKafkaImageDoes() {
    Properties props = EnvFile.kafkaProperties(Map.of("KAFKA_MIN_INSYNC_REPLICAS", "2", "KAFKA_HEAP_OPTS", "-Xmx1g",
        "KAFKA_LISTENER_NAME_INTERNAL_SSL_KEYSTORE___TYPE", "PKCS12", "KAFKA_SOME__UNDERSCORED", "x", "PARTITA_HTTP_PORT", "1"));

    assertThat(props).containsOnly(Map.entry("min.insync.replicas", "2"),
        Map.entry("listener.name.internal.ssl.keystore-type", "PKCS12"), Map.entry("some_underscored", "x"));
    for (String key : new String[] {"min.insync.replicas", "listener.name.internal.ssl.keystore-type", "some_underscored"}) {
      assertThat(EnvFile.kafkaKey(EnvFile.kafkaVariable(key))).isEqualTo(key);
    }
    assertThat(EnvFile.partitaVariable("worker.follow-plan")).isEqualTo("PARTITA_WORKER_FOLLOW__PLAN");
    assertThat(Settings.builder().environment(Map.of(EnvFile.partitaVariable("worker.follow-plan"), "true")).build()
        .bool("worker.follow-plan", false)).isTrue();
  }

  @Test
  void shouldCarryComposesSharedFileInTheLauncher() {
    Map<String, String> shared = EnvFile.shared();

    assertThat(shared).isEqualTo(EnvFile.read(COMPOSE.resolve("partita.env")));
    assertThat(shared).containsEntry("KAFKA_MIN_INSYNC_REPLICAS", "2").containsEntry("KAFKA_DEFAULT_REPLICATION_FACTOR", "3")
        .containsEntry("KAFKA_AUTO_CREATE_TOPICS_ENABLE", "false").containsEntry("PARTITA_TOPICS_REPLICATION", "3")
        .containsEntry("PARTITA_PLANNER_REPLICATION_FACTOR", "3").containsEntry("PARTITA_PLANNER_STANDBY_REPLICAS", "1")
        .containsEntry("PARTITA_WORKER_FOLLOW__PLAN", "true").containsEntry("PARTITA_GATEWAY_MODELS", "catalog");
    // Compose's own host names and registry stay out of what every deployment shares.
    assertThat(shared).doesNotContainKeys("PARTITA_KAFKA_BOOTSTRAP_SERVERS", "PARTITA_SERDE_MODE", "PARTITA_CATALOG_BASE__URI");
  }
}

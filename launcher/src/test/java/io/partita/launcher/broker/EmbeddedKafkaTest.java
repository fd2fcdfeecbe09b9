package io.partita.launcher.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded broker of {@code ./partita local}: starts, serves, and keeps its data across restarts. */
class EmbeddedKafkaTest {
  @TempDir Path data;

  static int freePort() throws Exception {
    // Two adjacent free ports: the broker's and the controller's.
    for (int i = 0; i < 20; i++) {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      try (ServerSocket next = new ServerSocket(port + 1)) {
        return port;
      } catch (java.io.IOException busy) {
        // try another
      }
    }
    throw new IllegalStateException("no two adjacent free ports");
  }

  @Test
  void shouldKeepTopicsAcrossARestartOnTheSameDataDirectory() throws Exception {
    int port = freePort();
    try (EmbeddedKafka kafka = new EmbeddedKafka(port, data)) {
      kafka.start();
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
        admin.createTopics(Set.of(new NewTopic("kept", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
      }
    }
    try (EmbeddedKafka kafka = new EmbeddedKafka(port, data)) {
      kafka.start();
      try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
        assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS)).contains("kept");
      }
    }
  }

  @Test
  void shouldRefuseAPortInUseWithAClearMessage() throws Exception {
    try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getByName("localhost"))) {
      EmbeddedKafka kafka = new EmbeddedKafka(busy.getLocalPort(), data);
      assertThatThrownBy(kafka::start).hasMessageContaining("port " + busy.getLocalPort() + " is in use");
    }
  }
}

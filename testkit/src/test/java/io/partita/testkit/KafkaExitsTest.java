package io.partita.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.common.utils.Exit;
import org.junit.jupiter.api.Test;

class KafkaExitsTest {
  @Test
  void shouldRefuseAndRecordKafkasHaltAndExitInsteadOfEndingTheTestJvm() {
    // Given the kit's procedures (without them the first call below ends this JVM and the build fails)
    KafkaExits.install();

    // When a broker thread asks Kafka to halt, then to exit
    assertThatThrownBy(() -> Exit.halt(1, "all log dirs have failed"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("halt(1): all log dirs have failed");
    assertThatThrownBy(() -> Exit.exit(3, "raft thread died"))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("exit(3): raft thread died");

    // Then both calls are kept, naming the thread that made them
    assertThat(KafkaExits.calls()).containsSubsequence(
        "halt(1): all log dirs have failed [" + Thread.currentThread().getName() + "]",
        "exit(3): raft thread died [" + Thread.currentThread().getName() + "]");
  }
}

package io.partita.launcher.broker;

import io.partita.testkit.ChildJvm;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded broker killed with SIGKILL (as {@code kill -9} of {@code ./partita local}) and started
 * again on the same directory, each time in a child JVM: every record the broker acknowledged before
 * the kill is read back, in order, so the fast-restart settings ({@link EmbeddedKafka#fastRestart})
 * cost no data. Prints how long each start of the broker took (no bound is asserted: BENCHMARKS.md and
 * {@code scripts/measure-restart.sh} give the figures).
 */
class EmbeddedKafkaCrashIT {
  private static final int RECORDS = 200;

  @TempDir Path dir;
  private Process child;

  @AfterEach
  void tearDown() {
    if (child != null) {
      child.destroyForcibly();
    }
  }

  @Test
  void shouldKeepEveryAcknowledgedRecordWhenTheBrokerIsKilledAndRestarted() throws Exception {
    int port = EmbeddedKafkaTest.freePort();
    Path data = dir.resolve("data");
    Path firstLog = dir.resolve("first.log");
    child = startChild(firstLog, "write", Integer.toString(port), data.toString(), Integer.toString(RECORDS));
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
        .until(() -> Files.readString(firstLog).contains("ACKED " + RECORDS) || !child.isAlive());
    assertThat(Files.readString(firstLog)).as("the writing child's output").contains("ACKED " + RECORDS);

    child.destroyForcibly(); // SIGKILL: no clean-shutdown marker, no final flush or checkpoint
    assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    Path secondLog = dir.resolve("second.log");
    long restart = System.nanoTime();
    child = startChild(secondLog, "read", Integer.toString(port), data.toString());
    assertThat(child.waitFor(3, TimeUnit.MINUTES)).as("the reading child ends").isTrue();
    long restartMs = (System.nanoTime() - restart) / 1_000_000;

    String output = Files.readString(secondLog);
    String read = output.lines().filter(l -> l.startsWith("READ ")).findFirst().orElse("READ (none: " + output + ")");
    String expected = IntStream.range(0, RECORDS).mapToObj(Integer::toString).collect(Collectors.joining(","));
    assertThat(read).isEqualTo("READ " + expected);
    System.out.printf("EmbeddedKafkaCrashIT: broker start after SIGKILL %s ms (child JVM up to READ: %d ms); first start %s ms%n",
        value(output, "BROKER_UP_MS"), restartMs, value(Files.readString(firstLog), "BROKER_UP_MS"));
  }

  private Process startChild(Path log, String... args) throws Exception {
    return ChildJvm.start(EmbeddedKafkaCrashMain.class, "512m", log, List.of(args));
  }

  private static String value(String output, String key) {
    return output.lines().filter(l -> l.startsWith(key + " ")).map(l -> l.substring(key.length() + 1)).findFirst().orElse("?");
  }
}

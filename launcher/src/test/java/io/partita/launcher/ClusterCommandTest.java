package io.partita.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code partita cluster} and {@code partita broker} refuse what they cannot act on with one line
 * naming the flag and exit 2, before anything is started; {@code partita broker} layers its
 * server settings as documented.
 */
class ClusterCommandTest {
  @TempDir Path dir;

  private record Run(int code, String out, String err) {}

  private static Run run(String... args) {
    CommandLine cmd = Partita.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    return new Run(cmd.execute(args), out.toString(), err.toString());
  }

  @Test
  void shouldRefuseBadUpFlagsNamingThemWithExitTwo() {
    Run cpus = run("cluster", "up", "--dir", dir.toString(), "--worker-cpus", "0.6,fast");
    Run count = run("cluster", "up", "--dir", dir.toString(), "--workers", "3", "--worker-cpus", "0.6,0.2");
    Run network = run("cluster", "up", "--dir", dir.toString(), "--network", "wifi");
    Run brokers = run("cluster", "up", "--dir", dir.toString(), "--brokers", "12");
    Run noDir = run("cluster", "up");

    assertThat(cpus.code()).isEqualTo(2);
    assertThat(cpus.err()).startsWith("--worker-cpus: 'fast' is not a number of cores (e.g. 0.6 for 60% of a core)"
        + System.lineSeparator() + "Try 'partita cluster up --help'");
    assertThat(count.err()).startsWith("--worker-cpus gives 2 quotas but --workers is 3: give one quota per worker host");
    assertThat(network.code()).isEqualTo(2);
    assertThat(network.err()).startsWith("--network: expected one of auto, netns, loopback, got 'wifi'");
    assertThat(brokers.err()).startsWith("--brokers 12: give 1 to 9");
    assertThat(noDir.err()).startsWith("--dir is required");
    assertThat(List.of(cpus.out(), count.out(), network.out(), brokers.out(), noDir.out())).containsOnly("");
    assertThat(dir).isEmptyDirectory();
  }

  @Test
  void shouldRefuseBadFaultsNamingWhatIsWrong() {
    Run verb = run("cluster", "fault", "--dir", dir.toString(), "explode", "host-1");
    Run missing = run("cluster", "fault", "--dir", dir.toString(), "kill");
    Run quota = run("cluster", "fault", "--dir", dir.toString(), "slow", "host-1", "--cpus", "-1");
    Run noCluster = run("cluster", "fault", "--dir", dir.toString(), "kill", "host-1");
    Run noSubcommand = run("cluster");

    assertThat(verb.code()).isEqualTo(2);
    assertThat(verb.err()).startsWith("VERB: expected one of kill, stop, pause, resume, partition, heal, slow, restore, start, got 'explode'");
    assertThat(missing.err()).startsWith("TARGET is required");
    assertThat(quota.err()).startsWith("--cpus: -1 is not a quota: give at least 0.01 of a core");
    assertThat(noCluster.code()).isEqualTo(1);
    assertThat(noCluster.err()).startsWith("partita cluster fault: no cluster in " + dir.toAbsolutePath().normalize());
    assertThat(noSubcommand.code()).isEqualTo(2);
    assertThat(noSubcommand.err()).startsWith("a subcommand is required: partita cluster up|status|down|fault");
  }

  @Test
  void shouldSayThereIsNoClusterAndDownNothingIdempotently() {
    Run status = run("cluster", "status", "--dir", dir.toString());
    Run down = run("cluster", "down", "--dir", dir.toString());

    assertThat(status.code()).isEqualTo(1);
    assertThat(status.err()).contains("no cluster in");
    assertThat(down.code()).isZero();
  }

  @Test
  void shouldLayerBrokerSettingsDefaultsThenEnvironmentThenFlags() throws Exception {
    BrokerCommand broker = new BrokerCommand();
    CommandLine cmd = new CommandLine(broker);
    cmd.parseArgs("--node-id", "2", "--listener", "198.18.0.12:9092", "--voters", "1@198.18.0.11:9093,2@198.18.0.12:9093",
        "--data-dir", dir.resolve("b2").toString(), "--set", "num.partitions=3");

    Properties p = broker.properties(java.util.Map.of("KAFKA_MIN_INSYNC_REPLICAS", "2", "KAFKA_NUM_PARTITIONS", "5",
        "KAFKA_HEAP_OPTS", "-Xmx1g"));

    assertThat(p).containsEntry("node.id", "2").containsEntry("process.roles", "broker,controller")
        .containsEntry("listeners", "PLAINTEXT://198.18.0.12:9092,CONTROLLER://198.18.0.12:9093")
        .containsEntry("advertised.listeners", "PLAINTEXT://198.18.0.12:9092")
        .containsEntry("controller.quorum.voters", "1@198.18.0.11:9093,2@198.18.0.12:9093")
        .containsEntry("min.insync.replicas", "2").containsEntry("num.partitions", "3")
        .containsEntry("log.dirs", dir.resolve("b2").toAbsolutePath().toString())
        .doesNotContainKey("heap.opts");
  }

  @Test
  void shouldRefuseABrokerWithoutAClusterIdOrWithBadVoters() {
    Run noId = run("broker", "--node-id", "1");
    Run voters = run("broker", "--cluster-id", "q1Sh-9_ISia_zwGINzRvyQ", "--voters", "one@here");

    assertThat(noId.code()).isEqualTo(2);
    assertThat(noId.err()).startsWith("--cluster-id is required (or the CLUSTER_ID environment variable)");
    assertThat(voters.code()).isEqualTo(2);
    assertThat(voters.err()).startsWith("--voters one@here: expected ID@HOST:PORT,...");
  }
}

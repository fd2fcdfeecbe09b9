package io.partita.launcher.broker;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real KRaft Kafka node (combined broker and controller) inside this JVM, with its data under a
 * directory it owns. The first start formats the directory; a later start finds it formatted and
 * reuses the data, so topics and offsets survive restarts.
 *
 * <p>Two shapes: {@link #EmbeddedKafka(int, Path)} is the single-node broker of {@code partita
 * local} on localhost; {@link #node} is one node of a multi-node cluster ({@code partita broker},
 * started by {@code partita cluster up}), given its full server properties (static
 * {@code controller.quorum.voters}, so it is formatted without {@code --standalone}) and the
 * cluster id every node of the cluster is formatted with.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedKafka.class);

  private final Properties props;
  private final Path logDir;
  private final String clusterId;
  private final String bootstrap;
  private KafkaRaftServer server;

  public EmbeddedKafka(int port, Path dataDir) {
    this(localProperties(port, dataDir.resolve("kafka").toAbsolutePath()), null);
  }

  private EmbeddedKafka(Properties props, String clusterId) {
    this.props = props;
    this.logDir = Path.of(props.getProperty("log.dirs"));
    this.clusterId = clusterId;
    String advertised = props.getProperty("advertised.listeners", props.getProperty("listeners"));
    this.bootstrap = advertised.split(",")[0].replaceFirst("^[A-Za-z_]+://", "");
  }

  /**
   * One node of a cluster. {@code props} are its complete server properties ({@code node.id},
   * {@code listeners}, {@code controller.quorum.voters}, {@code log.dirs}, ...); {@code clusterId}
   * (a Kafka {@code Uuid}) formats its data directory the first time, the same for every node.
   */
  public static EmbeddedKafka node(Properties props, String clusterId) {
    for (String key : new String[] {"node.id", "listeners", "controller.quorum.voters", "log.dirs"}) {
      if (props.getProperty(key) == null || props.getProperty(key).isBlank()) {
        throw new IllegalArgumentException("Kafka setting " + key + " is missing");
      }
    }
    Properties copy = new Properties();
    copy.putAll(props);
    copy.setProperty("log.dirs", Path.of(props.getProperty("log.dirs")).toAbsolutePath().toString());
    return new EmbeddedKafka(copy, Uuid.fromString(clusterId).toString());
  }

  /** The first advertised listener as {@code host:port}. */
  public String bootstrapServers() {
    return bootstrap;
  }

  public synchronized void start() throws Exception {
    // Kafka ends the whole JVM when it cannot bind; check first so the user gets a clear error.
    for (String listener : props.getProperty("listeners").split(",")) {
      String hostPort = listener.strip().replaceFirst("^[A-Za-z_]+://", "");
      int colon = hostPort.lastIndexOf(':');
      String host = hostPort.substring(0, colon);
      int p = Integer.parseInt(hostPort.substring(colon + 1));
      try (ServerSocket probe = new ServerSocket()) {
        probe.setReuseAddress(true);
        probe.bind(new InetSocketAddress(host.isEmpty() ? "0.0.0.0" : host, p), 1);
      } catch (IOException e) {
        throw new IllegalStateException("port " + p + " is in use (another Partita or Kafka?) or " + host
            + " is not an address of this host: " + e.getMessage());
      }
    }
    Files.createDirectories(logDir);
    Path meta = logDir.resolve("meta.properties");
    if (!Files.exists(meta)) {
      format(props);
    }
    KafkaConfig config = KafkaConfig.fromProps(props, false);
    server = new KafkaRaftServer(config, Time.SYSTEM);
    server.startup();
    log.info("Embedded Kafka node {} listening on {} (data in {})", props.getProperty("node.id"), bootstrapServers(), logDir);
  }

  private void format(Properties props) throws Exception {
    Path config = logDir.resolve("server.properties");
    try (var out = Files.newBufferedWriter(config)) {
      props.store(out, "Partita embedded broker");
    }
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    int code = StorageTool.execute(
        new String[] {"format", "-t", clusterId != null ? clusterId : Uuid.randomUuid().toString(), "-c", config.toString(), "--ignore-formatted"},
        new PrintStream(captured, true, StandardCharsets.UTF_8));
    if (code != 0) {
      throw new IllegalStateException("cannot format Kafka data directory " + logDir + ": "
          + captured.toString(StandardCharsets.UTF_8).strip());
    }
  }

  private static Properties localProperties(int port, Path logDir) {
    int controllerPort = port + 1;
    Properties p = nodeDefaults();
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@localhost:" + controllerPort);
    p.put("listeners", "PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
    p.put("log.dirs", logDir.toString());
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "4");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("transaction.state.log.num.partitions", "4");
    p.put("num.partitions", "1");
    p.put("auto.create.topics.enable", "true");
    fastRestart(p);
    return p;
  }

  /**
   * What every Partita node is, alone or in a cluster: broker and controller in one process, a
   * {@code PLAINTEXT} listener for clients and brokers and a {@code CONTROLLER} one, groups formed
   * without delay, and a small log cleaner buffer (its default, 128 MiB, would sit on the heap of a
   * node whose compacted topics hold a few records).
   */
  public static Properties nodeDefaults() {
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("controller.listener.names", "CONTROLLER");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("log.cleaner.dedupe.buffer.size", String.valueOf(4 * 1024 * 1024));
    return p;
  }

  /**
   * Settings that shorten a start after a crash ({@code kill -9}) without weakening what the broker
   * keeps: it still recovers every log that was not shut down cleanly, byte for byte, and with one
   * broker there is no other replica whose data an election could prefer or lose.
   */
  static void fastRestart(Properties p) {
    // After a crash the restarted controller still holds the dead broker's registration and counts
    // its session from its own start; a new incarnation of broker 1 is refused
    // (DUPLICATE_BROKER_REGISTRATION) until that session expires: broker.session.timeout.ms, 9 s by
    // default, all of it on the restart's path once the logs load quickly. Controller and broker
    // share this JVM, so a heartbeat is never lost on a network: 3 s still allows six missed
    // heartbeats (one every 500 ms) before the live broker would be fenced by a stall.
    p.put("broker.heartbeat.interval.ms", "500");
    p.put("broker.session.timeout.ms", "3000");
    // Without a clean-shutdown marker every log (about 40 here, most of them nearly empty) is
    // recovered: its unflushed segment re-read and checked, its indexes and producer snapshot
    // rewritten, each with an fsync. The default, 2 threads, leaves the disk idle while a thread
    // waits on fsync; 8 overlap those waits. The work done per log is unchanged.
    p.put("num.recovery.threads.per.data.dir", "8");
  }

  @Override
  public synchronized void close() {
    if (server != null) {
      server.shutdown();
      server.awaitShutdown();
      server = null;
    }
  }
}

package io.partita.launcher;

import io.partita.launcher.broker.EmbeddedKafka;
import io.partita.launcher.cluster.EnvFile;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.apache.kafka.common.Uuid;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code partita broker}: one KRaft Kafka node (broker and controller) in this JVM, for a cluster
 * of several ({@code partita cluster up} starts one per broker) or on its own. Its server settings
 * layer as Partita's do: built-in defaults, then {@code --properties FILE}, then {@code KAFKA_*}
 * environment variables named as the {@code apache/kafka} image names them (so the shared settings
 * file compose gives its brokers configures this node too), then the flags, then {@code --set}.
 */
@Command(name = "broker", mixinStandardHelpOptions = true,
    description = {"Run one Kafka node (KRaft, broker and controller) in this JVM.",
        "Settings: built-in defaults, --properties FILE, KAFKA_* environment variables (KAFKA_MIN_INSYNC_REPLICAS=2 is"
            + " min.insync.replicas, as in the apache/kafka image), these flags, then --set (the last wins)."})
final class BrokerCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--node-id", paramLabel = "N", description = "This node's id (node.id; default 1).")
  Integer nodeId;

  @Option(names = "--cluster-id", paramLabel = "UUID", description = "The Kafka cluster id every node is formatted with"
      + " (default: the CLUSTER_ID environment variable, as in the apache/kafka image).")
  String clusterId;

  @Option(names = "--listener", paramLabel = "HOST:PORT", description = "Client listener (default: localhost:9092).")
  String listener;

  @Option(names = "--controller", paramLabel = "HOST:PORT", description = "Controller listener (default: the listener's host, its port + 1).")
  String controller;

  @Option(names = "--advertised", paramLabel = "HOST:PORT", description = "Address clients are told (default: the listener).")
  String advertised;

  @Option(names = "--voters", paramLabel = "ID@HOST:PORT,...", description = "controller.quorum.voters, every node's controller listener"
      + " (default: this node alone).")
  String voters;

  @Option(names = "--data-dir", paramLabel = "DIR", description = "The node's log directory (log.dirs; default: .partita/broker-N).")
  Path dataDir;

  @Option(names = "--properties", paramLabel = "FILE", description = "A Kafka server.properties file.")
  Path properties;

  @Option(names = "--set", paramLabel = "KEY=VALUE", description = "Any Kafka server setting, e.g. --set num.partitions=3.")
  List<String> sets = List.of();

  @Override
  public Integer call() throws Exception {
    Properties props = properties(System.getenv());
    String id = clusterId != null ? clusterId : System.getenv("CLUSTER_ID");
    if (id == null || id.isBlank()) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--cluster-id is required (or the CLUSTER_ID environment variable): the same Kafka cluster id on every node,"
              + " e.g. from `kafka-storage.sh random-uuid`");
    }
    try {
      Uuid.fromString(id.strip());
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--cluster-id " + id + ": not a Kafka cluster id (22 characters of base64)");
    }
    EmbeddedKafka kafka = EmbeddedKafka.node(props, id.strip());
    Services services = new Services();
    kafka.start();
    services.add(kafka);
    return services.awaitShutdown();
  }

  /** The node's server properties, layered; package-private for tests. */
  Properties properties(Map<String, String> env) throws IOException {
    Properties p = EmbeddedKafka.nodeDefaults();
    if (properties != null) {
      if (!Files.isRegularFile(properties)) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--properties " + properties + ": no such file");
      }
      try (Reader r = Files.newBufferedReader(properties)) {
        p.load(r);
      }
    }
    p.putAll(EnvFile.kafkaProperties(env));
    int node = nodeId != null ? nodeId : Integer.parseInt(p.getProperty("node.id", "1"));
    p.put("node.id", Integer.toString(node));
    String client = listener != null ? hostPort("--listener", listener) : null;
    if (client != null || !p.containsKey("listeners")) {
      client = client != null ? client : "localhost:9092";
      String host = client.substring(0, client.lastIndexOf(':'));
      String control = controller != null ? hostPort("--controller", controller)
          : host + ":" + (Integer.parseInt(client.substring(client.lastIndexOf(':') + 1)) + 1);
      p.put("listeners", "PLAINTEXT://" + client + ",CONTROLLER://" + control);
      p.put("advertised.listeners", "PLAINTEXT://" + (advertised != null ? hostPort("--advertised", advertised) : client));
      if (voters == null && !p.containsKey("controller.quorum.voters")) {
        p.put("controller.quorum.voters", node + "@" + control);
      }
    } else if (advertised != null) {
      p.put("advertised.listeners", "PLAINTEXT://" + hostPort("--advertised", advertised));
    }
    if (voters != null) {
      if (!voters.matches("\\d+@[^,@]+:\\d+(,\\d+@[^,@]+:\\d+)*")) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--voters " + voters + ": expected ID@HOST:PORT,... (e.g. 1@10.0.0.1:9093,2@10.0.0.2:9093)");
      }
      p.put("controller.quorum.voters", voters);
    }
    if (dataDir != null || !p.containsKey("log.dirs")) {
      p.put("log.dirs", (dataDir != null ? dataDir : Path.of(".partita", "broker-" + node)).toAbsolutePath().toString());
    }
    for (String set : sets) {
      int eq = set.indexOf('=');
      if (eq <= 0) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--set " + set + ": expected KEY=VALUE");
      }
      p.put(set.substring(0, eq).strip(), set.substring(eq + 1).strip());
    }
    return p;
  }

  private String hostPort(String flag, String value) {
    int colon = value.lastIndexOf(':');
    if (colon <= 0 || !value.substring(colon + 1).matches("\\d{1,5}")) {
      throw new CommandLine.ParameterException(spec.commandLine(), flag + " " + value + ": expected HOST:PORT");
    }
    return value;
  }
}

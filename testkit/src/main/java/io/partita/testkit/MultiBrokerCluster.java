package io.partita.testkit;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.server.common.MetadataVersion;
import org.awaitility.Awaitility;

/**
 * A KRaft cluster of several brokers and one separate controller inside the test JVM, for tests
 * that stop and restart brokers (leader failover, under-replicated partitions). Unlike {@link
 * KafkaFixture} it is not shared: each test class starts its own and closes it. Internal topics are
 * replicated to every node with {@code min.insync.replicas} one less, as on a production cluster
 * of three ({@code RF 3, min ISR 2}).
 *
 * <p>A stopped broker keeps its port and its log directories, so {@link #startBroker} brings the
 * same broker back, as a restarted process on the same host would be.
 */
public final class MultiBrokerCluster implements AutoCloseable {
  private final KafkaClusterTestKit kit;
  private boolean closed;

  private MultiBrokerCluster(KafkaClusterTestKit kit) {
    this.kit = kit;
  }

  /**
   * Starts {@code nodes} brokers (at least 3 for RF 3 / min ISR 2) and one controller, and waits
   * until every broker is ready. Why not combined nodes with a 3-voter quorum: with Kafka 4.3.1's
   * test kit, such voters send each other UpdateVoter requests that the static quorum answers with
   * INVALID_REQUEST, which kills two of the three raft threads within a second of start (seen with
   * both the default and the latest production metadata version). Broker faults, the subject of
   * these tests, are the same either way.
   */
  public static MultiBrokerCluster start(int nodes) throws Exception {
    if (nodes < 2) {
      throw new IllegalArgumentException("nodes=" + nodes + ": a multi-broker cluster needs at least 2; use KafkaFixture for one");
    }
    String rf = Integer.toString(nodes);
    String minIsr = Integer.toString(nodes - 1);
    KafkaExits.install(); // a broker's fault must not end the test JVM
    KafkaClusterTestKit kit = new KafkaClusterTestKit.Builder(
            new TestKitNodes.Builder().setCombined(false).setNumBrokerNodes(nodes).setNumControllerNodes(1)
                .setBootstrapMetadataVersion(MetadataVersion.latestProduction())
                .build())
        .setConfigProp("default.replication.factor", rf)
        .setConfigProp("min.insync.replicas", minIsr)
        .setConfigProp("offsets.topic.replication.factor", rf)
        .setConfigProp("offsets.topic.num.partitions", "4")
        .setConfigProp("transaction.state.log.replication.factor", rf)
        .setConfigProp("transaction.state.log.min.isr", minIsr)
        .setConfigProp("transaction.state.log.num.partitions", "4")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("log.cleaner.dedupe.buffer.size", String.valueOf(2 * 1024 * 1024))
        // A restarted broker rejoins the ISR within seconds rather than the default 30 s.
        .setConfigProp("replica.lag.time.max.ms", "5000")
        .setConfigProp("num.partitions", "1")
        .setConfigProp("auto.create.topics.enable", "false")
        .build();
    try {
      kit.format();
      kit.startup();
      kit.waitForReadyBrokers();
    } catch (Exception e) {
      kit.close();
      throw e;
    }
    return new MultiBrokerCluster(kit);
  }

  public String bootstrapServers() {
    return kit.bootstrapServers();
  }

  public Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
  }

  public Set<Integer> brokerIds() {
    return new TreeSet<>(kit.brokers().keySet());
  }

  /** Stops one broker (a clean shutdown: leadership moves to the other in-sync replicas). */
  public void stopBroker(int id) {
    broker(id).shutdown();
    broker(id).awaitShutdown();
  }

  /** Starts a stopped broker again, on the same port with the same data. */
  public void startBroker(int id) {
    broker(id).startup();
  }

  public boolean isRunning(int id) {
    return !broker(id).isShutdown();
  }

  private BrokerServer broker(int id) {
    BrokerServer broker = kit.brokers().get(id);
    if (broker == null) {
      throw new IllegalArgumentException("no broker " + id + " in this cluster; brokers are " + brokerIds());
    }
    return broker;
  }

  /** The current leader of every partition of a topic (partition index order); -1 where none. */
  public List<Integer> leaders(String topic) {
    try (Admin admin = admin()) {
      TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
      return description.partitions().stream().map(TopicPartitionInfo::leader).map(n -> n == null ? -1 : n.id()).toList();
    } catch (Exception e) {
      throw new IllegalStateException("cannot describe topic " + topic + ": " + e.getMessage(), e);
    }
  }

  /** The in-sync replicas of one partition, as broker ids. */
  public Set<Integer> inSyncReplicas(String topic, int partition) {
    try (Admin admin = admin()) {
      TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
      return new TreeSet<>(description.partitions().get(partition).isr().stream().map(Node::id).toList());
    } catch (Exception e) {
      throw new IllegalStateException("cannot describe topic " + topic + ": " + e.getMessage(), e);
    }
  }

  /** Waits until every partition of the topic has all {@code replicas} in sync again. */
  public void awaitFullyReplicated(String topic, int replicas, Duration timeout) {
    Awaitility.await("all replicas of " + topic + " in sync").atMost(timeout).pollInterval(Duration.ofMillis(200))
        .until(() -> {
          for (int p = 0; p < leaders(topic).size(); p++) {
            if (inSyncReplicas(topic, p).size() < replicas) {
              return false;
            }
          }
          return true;
        });
  }

  @Override
  public synchronized void close() throws Exception {
    if (!closed) {
      closed = true; // close() of the Kafka 4.3.1 test kit is not idempotent
      kit.close();
    }
  }
}

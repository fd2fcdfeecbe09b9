package io.partita.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real single-node KRaft Kafka cluster inside the test JVM (Kafka's own test kit), started once
 * per JVM on a random port and closed when the test run ends. Tests stay apart by using a unique
 * topic prefix ({@link #uniquePrefix}) and their own consumer groups.
 *
 * <p>Use it with {@code @ExtendWith(KafkaFixture.class)} and the static accessors.
 */
public final class KafkaFixture implements BeforeAllCallback {
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static KafkaClusterTestKit cluster;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
    // The root store closes the cluster once, when every test class of this JVM has run.
    context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
        .getOrComputeIfAbsent(KafkaFixture.class.getName(), k -> new Closer());
  }

  /** Closes the shared cluster when JUnit closes the root context (both interfaces, for JUnit 5 and 6). */
  private static final class Closer implements ExtensionContext.Store.CloseableResource, AutoCloseable {
    @Override
    public void close() throws Exception {
      stop();
    }
  }

  /** Starts the shared cluster if it is not running yet. */
  public static synchronized void start() throws Exception {
    if (cluster != null) {
      return;
    }
    KafkaExits.install(); // a broker's fault must not end the test JVM
    KafkaClusterTestKit kit = new KafkaClusterTestKit.Builder(
            new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "4")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("transaction.state.log.num.partitions", "4")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("log.cleaner.dedupe.buffer.size", String.valueOf(2 * 1024 * 1024))
        .setConfigProp("num.partitions", "1")
        .setConfigProp("auto.create.topics.enable", "true")
        .build();
    kit.format();
    kit.startup();
    kit.waitForReadyBrokers();
    cluster = kit;
  }

  static synchronized void stop() throws Exception {
    if (cluster != null) {
      KafkaClusterTestKit kit = cluster;
      cluster = null; // close() of the Kafka 4.3.1 test kit is not idempotent, so it runs at most once
      kit.close();
    }
  }

  public static synchronized String bootstrapServers() {
    if (cluster == null) {
      throw new IllegalStateException("KafkaFixture not started: add @ExtendWith(KafkaFixture.class)");
    }
    return cluster.bootstrapServers();
  }

  /** A topic prefix no other test in this JVM uses, such as {@code t3-gateway}. */
  public static String uniquePrefix(String base) {
    return "t" + COUNTER.incrementAndGet() + "-" + base;
  }

  public static Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
  }

  public static KafkaProducer<String, byte[]> producer() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    // One request in flight per connection: on a topic created a moment ago the broker can refuse a
    // first batch NOT_LEADER_OR_FOLLOWER yet append the next ones, after which the retried first is
    // refused OUT_OF_ORDER_SEQUENCE_NUMBER until it expires, and a test's requests are lost.
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    return new KafkaProducer<>(p);
  }

  /** A consumer in a fresh group that reads the given topics from the beginning. */
  public static KafkaConsumer<String, byte[]> consumer(String... topics) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "test-" + UUID.randomUUID());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p);
    consumer.subscribe(List.of(topics));
    return consumer;
  }

  /**
   * Reads records from the topics until {@code count} have arrived or the timeout passes; returns
   * what arrived (callers assert on the size, so a shortfall fails with the records seen).
   */
  public static List<ConsumerRecord<String, byte[]>> read(int count, Duration timeout, String... topics) {
    List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
    long end = System.nanoTime() + timeout.toNanos();
    try (KafkaConsumer<String, byte[]> consumer = consumer(topics)) {
      while (out.size() < count && System.nanoTime() < end) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    return out;
  }

  /** For JUnit, which instantiates the extension. */
  public KafkaFixture() {}
}

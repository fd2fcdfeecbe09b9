package io.partita.common.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Kafka client settings every Partita component starts from: the user's {@code kafka.*}
 * settings (security, timeouts, ...) plus the bootstrap servers, string keys and byte values
 * (records are encoded by {@link io.partita.common.serde.Codecs}). Producers are idempotent with
 * {@code acks=all}, so a reply or request is written once even when a send is retried; consumers
 * never auto-commit, so offsets move only after the work for them is done. Settings marked "if
 * absent" can be overridden through {@code kafka.*}.
 */
public final class KafkaClients {
  private KafkaClients() {}

  /** How long one metadata question for a topic's partitions may take. */
  private static final Duration ASK = Duration.ofSeconds(5);
  /** The pause between two questions for the partitions of a topic not in the metadata yet. */
  static final long ASK_AGAIN_MS = 100;

  /**
   * The partitions of {@code topic}. A topic created a moment ago may not be in the metadata yet, so
   * they are asked for again (every {@link #ASK_AGAIN_MS} ms) until they are known or {@code wait}
   * has passed; empty when the topic has none by then, or when the thread is interrupted (the
   * interrupt is kept). Every reader that assigns itself a topic finds its partitions here.
   */
  public static List<TopicPartition> partitionsOf(Consumer<?, ?> consumer, String topic, Duration wait) {
    long giveUp = System.nanoTime() + wait.toNanos();
    while (true) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic, ASK).stream()
          .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
      if (!partitions.isEmpty() || System.nanoTime() - giveUp > 0) {
        return partitions;
      }
      try {
        Thread.sleep(ASK_AGAIN_MS); // an unknown topic is answered at once: do not ask a hundred times a second
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return partitions;
      }
    }
  }

  /** The largest request a producer built from {@code producerProps} sends: its {@code max.request.size}, or Kafka's default. */
  public static long maxRequestSize(Properties producerProps) {
    Object value = producerProps.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG);
    return value == null ? 1_048_576 : Long.parseLong(value.toString().strip());
  }

  /**
   * Assigns {@code consumer} every partition of {@code topic} and positions it at the end, so it
   * reads only what is written from now on (a reply topic). The partitions are found as
   * {@link #partitionsOf} does.
   */
  public static List<TopicPartition> assignAtEnd(Consumer<?, ?> consumer, String topic, Duration wait) {
    List<TopicPartition> partitions = partitionsOf(consumer, topic, wait);
    if (partitions.isEmpty()) {
      throw new IllegalStateException("topic " + topic + " has no partitions after " + wait.toSeconds() + " s");
    }
    consumer.assign(partitions);
    consumer.seekToEnd(partitions);
    partitions.forEach(consumer::position); // resolve the end offsets now, before anything is sent
    return partitions;
  }

  public static Properties base(String bootstrapServers, Properties kafka) {
    Properties p = new Properties();
    p.putAll(kafka);
    p.put("bootstrap.servers", bootstrapServers);
    return p;
  }

  public static Properties producer(String bootstrapServers, Properties kafka) {
    Properties p = base(bootstrapServers, kafka);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "1");
    // The planner grows a request topic as its base model gains slots, and the workers share its
    // partitions by capacity; a producer that kept the old count for Kafka's 5 minutes would send
    // every request to the first partitions only, so to whichever workers own those. Ten seconds,
    // as the workers' consumers notice new partitions.
    p.putIfAbsent(ProducerConfig.METADATA_MAX_AGE_CONFIG, Long.toString(METADATA_MAX_AGE_MS));
    return p;
  }

  /** {@code metadata.max.age.ms} of every producer made here unless the settings give one. */
  public static final long METADATA_MAX_AGE_MS = 10_000;

  /** {@code fetch.max.wait.ms} of every consumer made here unless the settings give one (Kafka's default). */
  public static final long IDLE_FETCH_WAIT_MS = 500;

  public static Properties consumer(String bootstrapServers, Properties kafka) {
    Properties p = base(bootstrapServers, kafka);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    // How long the broker may hold a fetch that finds nothing. It costs no latency: with
    // fetch.min.bytes 1 the broker answers a waiting fetch as soon as a record is appended. It costs
    // CPU when short: at 10 ms (this method's old value) each idle consumer made here (a gateway's
    // replies, routes, catalog and jobs loops, a client's replies) made 100 fetches a second, broker
    // and client CPU a 2-core host then lacked for the calls (BENCHMARKS.md 5c). Kafka's own default,
    // as the worker's consumers (from base()) always had; kafka.fetch.max.wait.ms overrides it.
    p.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Long.toString(IDLE_FETCH_WAIT_MS));
    return p;
  }
}

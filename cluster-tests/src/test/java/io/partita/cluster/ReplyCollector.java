package io.partita.cluster;

import io.partita.avro.InferenceReply;
import io.partita.common.KafkaHeaders;
import io.partita.common.serde.RecordCodec;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a reply topic from the beginning on its own thread (assigned, no consumer group) and keeps
 * the first reply per correlation id, as a client that drops duplicate replies would. Counts the
 * duplicates too, and calls a listener once per newly answered id.
 */
final class ReplyCollector implements AutoCloseable {
  private final Map<String, InferenceReply> replies = new ConcurrentHashMap<>();
  private final Map<String, byte[]> raw = new ConcurrentHashMap<>();
  private final AtomicInteger duplicates = new AtomicInteger();
  private final Thread thread;
  private volatile boolean running = true;
  private volatile Throwable failure;

  ReplyCollector(String bootstrap, Map<String, String> extra, String topic, int partitions, RecordCodec<InferenceReply> codec, Consumer<String> onNew) {
    Properties p = new Properties();
    p.putAll(extra);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p);
    thread = new Thread(() -> {
      try (consumer) {
        var assigned = java.util.stream.IntStream.range(0, partitions).mapToObj(i -> new TopicPartition(topic, i)).toList();
        consumer.assign(assigned);
        consumer.seekToBeginning(assigned);
        while (running) {
          for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(100))) {
            String id = KafkaHeaders.get(record.headers(), KafkaHeaders.CORRELATION_ID);
            raw.putIfAbsent(id, record.value());
            if (replies.putIfAbsent(id, codec.decode(record.topic(), record.value())) == null) {
              onNew.accept(id);
            } else {
              duplicates.incrementAndGet();
            }
          }
        }
      } catch (Throwable e) {
        failure = e;
      }
    }, "reply-collector-" + topic);
    thread.setDaemon(true);
    thread.start();
  }

  Map<String, InferenceReply> replies() {
    if (failure != null) {
      throw new IllegalStateException("the reply collector stopped: " + failure, failure);
    }
    return replies;
  }

  /** The bytes of the first reply per correlation id, as they were on the topic. */
  Map<String, byte[]> raw() {
    replies();
    return raw;
  }

  int count() {
    return replies().size();
  }

  int duplicates() {
    return duplicates.get();
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.join(10_000);
  }
}

package io.partita.profiler;

import io.partita.testkit.KafkaFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/** Reads topics from the beginning and keeps everything read, for tests that wait on a condition. */
final class TopicReader implements AutoCloseable {
  private final KafkaConsumer<String, byte[]> consumer;
  private final List<ConsumerRecord<String, byte[]>> seen = new ArrayList<>();

  TopicReader(String... topics) {
    consumer = KafkaFixture.consumer(topics);
  }

  /** Polls once and returns every record read so far. */
  synchronized List<ConsumerRecord<String, byte[]>> records() {
    consumer.poll(Duration.ofMillis(100)).forEach(seen::add);
    return List.copyOf(seen);
  }

  List<ConsumerRecord<String, byte[]>> records(String topic) {
    return records().stream().filter(r -> r.topic().equals(topic)).toList();
  }

  @Override
  public synchronized void close() {
    consumer.close();
  }
}

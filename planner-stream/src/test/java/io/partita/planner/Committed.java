package io.partita.planner;

import io.partita.testkit.KafkaFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads what is committed on topics now, from the beginning to the end (read_committed, no group). */
final class Committed {
  private Committed() {}

  static List<ConsumerRecord<String, byte[]>> readAll(String... topics) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaFixture.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "read-" + UUID.randomUUID());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (String topic : topics) {
        List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
        if (infos != null) {
          infos.forEach(i -> partitions.add(new TopicPartition(i.topic(), i.partition())));
        }
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    return out;
  }
}

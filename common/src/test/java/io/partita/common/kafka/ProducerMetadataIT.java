package io.partita.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.partita.testkit.KafkaFixture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A producer made by {@link KafkaClients} writes to partitions added to a topic after it started
 * within seconds: the planner grows the request topics and the workers share them by capacity, so a
 * producer stuck on the old count (Kafka's default refresh is 5 minutes) would send every request
 * to the workers owning the first partitions.
 */
@ExtendWith(KafkaFixture.class)
class ProducerMetadataIT {

  @Test
  void shouldProduceToPartitionsAddedAfterTheProducerStarted() throws Exception {
    String topic = KafkaFixture.uniquePrefix("grown") + ".requests.m";
    try (var admin = KafkaFixture.admin();
         KafkaProducer<String, byte[]> producer = new KafkaProducer<>(KafkaClients.producer(KafkaFixture.bootstrapServers(),
             new Properties()))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
      assertThat(producer.send(new ProducerRecord<>(topic, "first", new byte[0])).get().partition()).isZero();

      admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(8))).all().get();

      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() ->
          producer.send(new ProducerRecord<>(topic, UUID.randomUUID().toString(), new byte[0])).get().partition() > 0);
    }
  }
}

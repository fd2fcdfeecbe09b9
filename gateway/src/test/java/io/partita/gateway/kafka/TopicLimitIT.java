package io.partita.gateway.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.common.kafka.TopicAdmin;
import io.partita.testkit.KafkaFixture;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The record limit the gateway sizes job packs by is the reply topic's own, read from the broker. */
@ExtendWith(KafkaFixture.class)
class TopicLimitIT {
  @Test
  void shouldReadATopicsRecordLimitAndFallBackToKafkasDefault() throws Exception {
    String small = KafkaFixture.uniquePrefix("limit") + ".replies.small";
    try (Admin admin = KafkaFixture.admin()) {
      admin.createTopics(List.of(new NewTopic(small, 1, (short) 1).configs(Map.of("max.message.bytes", "200000"))))
          .all().get(30, TimeUnit.SECONDS);
      assertThat(TopicAdmin.maxMessageBytes(admin, small)).isEqualTo(200_000);
      // a topic that does not exist cannot be described: Kafka's default, not a failure
      assertThat(TopicAdmin.maxMessageBytes(admin, small + ".missing")).isEqualTo(TopicAdmin.DEFAULT_MAX_MESSAGE_BYTES);
    }
  }
}

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
    String prefix = KafkaFixture.uniquePrefix("limit");
    try (Admin admin = KafkaFixture.admin()) {
      // Read at once, as the gateway does after creating its reply topic: the broker may not have
      // applied a new topic yet (CI once read Kafka's default here), and the read waits for it.
      for (int i = 0; i < 20; i++) {
        String small = prefix + ".replies.small" + i;
        int limit = 200_000 + i;
        admin.createTopics(List.of(new NewTopic(small, 1, (short) 1).configs(Map.of("max.message.bytes", "" + limit))))
            .all().get(30, TimeUnit.SECONDS);
        assertThat(TopicAdmin.maxMessageBytes(admin, small)).as(small).isEqualTo(limit);
      }
      // a topic that does not exist cannot be described: Kafka's default, not a failure
      assertThat(TopicAdmin.maxMessageBytes(admin, prefix + ".missing")).isEqualTo(TopicAdmin.DEFAULT_MAX_MESSAGE_BYTES);
    }
  }
}

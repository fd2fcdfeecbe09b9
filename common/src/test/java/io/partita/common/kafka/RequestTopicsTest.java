package io.partita.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.Topics;
import org.junit.jupiter.api.Test;

class RequestTopicsTest {
  @Test
  void shouldGiveOnePartitionPerInstanceButNeverFewerThanTheMinimum() {
    assertThat(RequestTopics.partitions(0, 4)).isEqualTo(4);
    assertThat(RequestTopics.partitions(1, 4)).isEqualTo(4);
    assertThat(RequestTopics.partitions(3, 4)).isEqualTo(12);
    assertThat(RequestTopics.partitions(12, 4)).isEqualTo(48);
    assertThat(RequestTopics.partitions(1, 1)).isEqualTo(4);
    assertThat(RequestTopics.partitions(2, 20)).isEqualTo(20);
  }

  @Test
  void shouldRefuseAMinimumBelowOneNamingTheSetting() {
    assertThatThrownBy(() -> RequestTopics.partitions(2, 0)).hasMessageContaining("topic.requests.partitions");
  }

  @Test
  void shouldNameOneTopicPerBaseModel() {
    Topics topics = new Topics("p");
    assertThat(topics.requests("demo-mlp")).isEqualTo("p.requests.demo-mlp");
    assertThat(topics.baseModelOf("p.requests.demo-mlp")).isEqualTo("demo-mlp");
    assertThat(topics.baseModelOf("p.replies.x")).isNull();
  }
}

package io.partita.common.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.Topics;
import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class KafkaSettingsTest {
  private static KafkaSettings parse(Map<String, String> values) {
    return KafkaSettings.from(Settings.of(values));
  }

  private static Map<String, String> with(String... keyValues) {
    Map<String, String> out = new HashMap<>();
    out.put("kafka.bootstrap.servers", "broker:9092");
    for (int i = 0; i < keyValues.length; i += 2) {
      out.put(keyValues[i], keyValues[i + 1]);
    }
    return out;
  }

  @Test
  void shouldReadTheBrokersThePrefixAndEveryClientSetting() {
    KafkaSettings kafka = parse(with("kafka.bootstrap.servers", " a:9092,b:9093 ", "topic.prefix", "team1",
        "kafka.security.protocol", "SASL_SSL", "kafka.linger.ms", "7", "gateway.id", "g1"));

    assertThat(kafka.bootstrapServers()).isEqualTo("a:9092,b:9093");
    assertThat(kafka.topicPrefix()).isEqualTo("team1");
    assertThat(kafka.topics().planRoutes()).isEqualTo("team1.plan.routes");
    assertThat(kafka.clients()).containsEntry("security.protocol", "SASL_SSL").containsEntry("linger.ms", "7")
        .doesNotContainKey("gateway.id").doesNotContainKey("id");
    assertThat(kafka.codecs()).isNotNull();
  }

  @Test
  void shouldDefaultThePrefix() {
    assertThat(parse(with()).topicPrefix()).isEqualTo(Topics.DEFAULT_PREFIX);
  }

  @Test
  void shouldLetClientSettingsThroughToProducersButKeepItsOwnGuarantees() {
    KafkaSettings kafka = parse(with("kafka.linger.ms", "7", "kafka.acks", "0"));

    Properties producer = kafka.producer();
    assertThat(producer).containsEntry("bootstrap.servers", "broker:9092").containsEntry("linger.ms", "7")
        .containsEntry("acks", "all");
    assertThat(kafka.consumer()).containsEntry("enable.auto.commit", "false");
    assertThat(kafka.base()).containsEntry("bootstrap.servers", "broker:9092");
  }

  @Test
  void shouldNotLetOneCallerChangeTheClientSettingsOfAnother() {
    KafkaSettings kafka = parse(with("kafka.linger.ms", "7"));

    kafka.clients().put("linger.ms", "500");
    kafka.producer().put("linger.ms", "500");

    assertThat(kafka.clients()).containsEntry("linger.ms", "7");
  }

  @Test
  void shouldRefuseMissingBrokersNamingTheKeyAndTheFlag() {
    assertThatThrownBy(() -> parse(Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("kafka.bootstrap.servers: missing").hasMessageContaining("--bootstrap");
    assertThatThrownBy(() -> parse(Map.of("kafka.bootstrap.servers", "  ")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("kafka.bootstrap.servers: missing");
  }

  @Test
  void shouldRefuseABrokerThatIsNotHostAndPortNamingKeyAndValue() {
    for (String bad : new String[] {"broker", "broker:", ":9092", "broker:x92", "a:9092,broker:99999"}) {
      assertThatThrownBy(() -> parse(with("kafka.bootstrap.servers", bad))).as(bad)
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining("kafka.bootstrap.servers=" + bad)
          .hasMessageContaining("host:port");
    }
  }

  @Test
  void shouldAcceptTheBrokerFormsKafkaAccepts() {
    for (String good : new String[] {"localhost:9092", "10.0.0.1:9092", "[::1]:9092", "a:1, b:2,", "SASL_SSL://a:9093"}) {
      assertThat(parse(with("kafka.bootstrap.servers", good)).bootstrapServers()).as(good).isEqualTo(good.strip());
    }
  }

  @Test
  void shouldRefuseAnIllegalTopicPrefixNamingKeyAndValue() {
    assertThatThrownBy(() -> parse(with("topic.prefix", "a/b")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("topic.prefix=a/b")
        .hasMessageContaining("letters, digits");
  }

  @Test
  void shouldRefuseAnUnknownSecurityProtocolNamingKeyAndValue() {
    assertThatThrownBy(() -> parse(with("kafka.security.protocol", "TLS")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("kafka.security.protocol=TLS")
        .hasMessageContaining("SASL_SSL");
    assertThat(parse(with("kafka.security.protocol", "sasl_plaintext")).clients())
        .containsEntry("security.protocol", "sasl_plaintext"); // Kafka reads it case-insensitively
  }

  @Test
  void shouldRefuseAnUnknownSerdeModeNamingTheKey() {
    assertThatThrownBy(() -> parse(with("serde.mode", "json")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("serde.mode=json");
  }

  @Test
  void shouldMaskSecretsWhenPrinted() {
    String printed = parse(with("kafka.sasl.jaas.config", "org.Login required password=\"hunter2\";",
        "kafka.ssl.truststore.password", "s3cret")).toString();

    assertThat(printed).doesNotContain("hunter2").doesNotContain("s3cret").contains("sasl.jaas.config=****")
        .contains("broker:9092");
  }
}

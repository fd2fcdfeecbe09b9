package io.partita.planner.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.ModelVersion;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoRepository;
import io.partita.planner.catalog.RepositorySync.TopicKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RepositorySyncTest {
  private static ProducerRecord<String, byte[]> record(String topic, String key, String value) {
    return new ProducerRecord<>(topic, key, value.getBytes(StandardCharsets.UTF_8));
  }

  private static Map<TopicKey, byte[]> published(String... topicKeyValue) {
    Map<TopicKey, byte[]> out = new LinkedHashMap<>();
    for (int i = 0; i < topicKeyValue.length; i += 3) {
      out.put(new TopicKey(topicKeyValue[i], topicKeyValue[i + 1]), topicKeyValue[i + 2].getBytes(StandardCharsets.UTF_8));
    }
    return out;
  }

  private static List<String> describe(List<ProducerRecord<String, byte[]>> records) {
    return records.stream().map(r -> r.topic() + " " + r.key() + " " + (r.value() == null ? "TOMBSTONE" : new String(r.value(), StandardCharsets.UTF_8)))
        .toList();
  }

  @Test
  void shouldPublishEverythingTheFirstTime() {
    var changes = RepositorySync.changes(Map.of(), List.of(record("models", "m/1", "a"), record("services", "m", "s")));

    assertThat(describe(changes)).containsExactly("models m/1 a", "services m s");
  }

  @Test
  void shouldPublishNothingWhenTheRepositoryIsUnchanged() {
    var changes = RepositorySync.changes(published("models", "m/1", "a", "services", "m", "s"),
        List.of(record("models", "m/1", "a"), record("services", "m", "s")));

    assertThat(changes).isEmpty();
  }

  @Test
  void shouldPublishANewModelAndAChangedVersionOnly() {
    var changes = RepositorySync.changes(published("models", "m/1", "a", "services", "m", "s"),
        List.of(record("models", "m/1", "a2"), record("models", "n/1", "b"), record("services", "m", "s"), record("services", "n", "t")));

    assertThat(describe(changes)).containsExactly("models m/1 a2", "models n/1 b", "services n t");
  }

  @Test
  void shouldTombstoneWhatLeftTheRepositoryServiceModelsFirst() {
    var changes = RepositorySync.changes(published("models", "m/1", "a", "models", "n/1", "b", "services", "m", "s", "services", "n", "t"),
        List.of(record("models", "m/1", "a"), record("services", "m", "s")));

    assertThat(describe(changes)).containsExactly("services n TOMBSTONE", "models n/1 TOMBSTONE");
  }

  @Test
  void shouldPublishTheFilesUnderTheBaseUriItWasGiven(@TempDir Path repo) throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics("sync");
    Codecs codecs = Codecs.singleObject();
    var producer = new MockProducer<String, byte[]>(true, null, new StringSerializer(), new ByteArraySerializer());

    int sent = new RepositorySync(producer, repo, topics, codecs, Optional.of("http://models:8000")).sync();

    assertThat(sent).isEqualTo(producer.history().size()).isPositive();
    var first = codecs.codec(ModelVersion.class).decode(topics.catalogModels(), producer.history().get(0).value());
    assertThat(first.getUri()).isEqualTo("http://models:8000/demo-mlp/1/model.onnx");
  }
}

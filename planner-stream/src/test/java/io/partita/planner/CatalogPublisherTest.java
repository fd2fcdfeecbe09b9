package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.catalog.CatalogPublisher;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogPublisherTest {
  @TempDir Path repo;

  @Test
  void shouldTurnTheDemoRepositoryIntoModelVersionsFirstThenServiceModels() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics("c");
    Codecs codecs = Codecs.singleObject();
    List<ProducerRecord<String, byte[]>> records = CatalogPublisher.records(ModelRepository.scan(repo), topics, codecs);

    assertThat(records).extracting(ProducerRecord::key)
        .containsExactly("demo-mlp/1", "demo-mlp/2", "demo", "demo-a", "demo-b", "demo-c");
    assertThat(records.subList(0, 2)).allMatch(r -> r.topic().equals(topics.catalogModels()));
    ModelVersion v2 = codecs.codec(ModelVersion.class).decode(topics.catalogModels(), records.get(1).value());
    assertThat(v2.getUri()).isEqualTo("demo-mlp/2/model.onnx");
    assertThat(v2.getSha256()).hasSize(64);
    ServiceModel a = codecs.codec(ServiceModel.class).decode(topics.catalogServices(), records.get(3).value());
    assertThat(a.getBaseModel()).isEqualTo("demo-mlp");
    assertThat(a.getWeightFile().getUri()).isEqualTo(DemoRepository.adapterPath("a"));
    assertThat(a.getWeightFile().getSizeBytes()).isPositive();
    assertThat(a.getInstances()).isEqualTo(1);
    ServiceModel bare = codecs.codec(ServiceModel.class).decode(topics.catalogServices(), records.get(2).value());
    assertThat(bare.getWeightFile()).isNull();
  }
}

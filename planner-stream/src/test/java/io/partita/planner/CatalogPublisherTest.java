package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoHeavy;
import io.partita.models.demo.DemoRepository;
import io.partita.models.demo.DemoSet;
import io.partita.models.repo.ModelRepository;
import io.partita.planner.catalog.CatalogPublisher;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import io.partita.common.config.ConfigException;
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
    assertThat(bare.getVersionObjective()).isEqualTo("latency");
    assertThat(bare.getLatencyObjectiveMs()).isNull();
  }

  @Test
  void shouldPublishTheRequirementsAndObjectiveAServiceModelsManifestDeclares() throws Exception {
    DemoRepository.writeTo(repo, DemoSet.CLUSTER);
    Topics topics = new Topics("c");
    Codecs codecs = Codecs.singleObject();

    List<ProducerRecord<String, byte[]>> records = CatalogPublisher.records(ModelRepository.scan(repo), topics, codecs);

    ProducerRecord<String, byte[]> heavy = records.stream().filter(r -> r.key().equals(DemoHeavy.MODEL_NAME))
        .findFirst().orElseThrow();
    ServiceModel sm = codecs.codec(ServiceModel.class).decode(topics.catalogServices(), heavy.value());
    assertThat(sm.getVersionObjective()).isEqualTo("accuracy");
    assertThat(sm.getLatencyObjectiveMs()).isEqualTo(DemoRepository.HEAVY_LATENCY_OBJECTIVE_MS);
    assertThat(sm.getMinAccuracy()).isNull();
    assertThat(sm.getMemoryCapBytes()).isNull();
    ModelVersion v1 = codecs.codec(ModelVersion.class).decode(topics.catalogModels(), records.stream()
        .filter(r -> r.key().equals(DemoHeavy.MODEL_NAME + "/1")).findFirst().orElseThrow().value());
    assertThat(v1.getAccuracy()).isEqualTo(DemoHeavy.ACCURACY_WIDE);
    assertThat(io.partita.models.repo.ServiceRequirements.OBJECTIVES).as("what a manifest may name, the planner reads")
        .isEqualTo(io.partita.planning.version.VersionObjective.choices());
  }

  @Test
  void shouldPublishTheInstancesTheManifestAsksFor() throws Exception {
    java.nio.file.Path file = repo.resolve("wide/1/model.onnx");
    java.nio.file.Files.createDirectories(file.getParent());
    java.nio.file.Files.write(file, new io.partita.models.onnx.OnnxGraphBuilder("wide", "test")
        .input("x", ai.onnx.proto.OnnxMl.TensorProto.DataType.FLOAT, "n", 3).relu("x", "y")
        .output("y", ai.onnx.proto.OnnxMl.TensorProto.DataType.FLOAT, "n", 3).toBytes());
    java.nio.file.Files.writeString(repo.resolve("wide/model.yaml"), "serviceModels:\n  wide: {instances: 2}\n");
    Topics topics = new Topics("c");
    Codecs codecs = Codecs.singleObject();

    List<ProducerRecord<String, byte[]>> records = CatalogPublisher.records(ModelRepository.scan(repo), topics, codecs);

    ServiceModel wide = codecs.codec(ServiceModel.class).decode(topics.catalogServices(), records.get(1).value());
    assertThat(wide.getName()).isEqualTo("wide");
    assertThat(wide.getInstances()).isEqualTo(2);
  }

  @Test
  void shouldNameEveryFileUnderTheBaseUriWhenOneIsGivenAndKeepTheSha256() throws Exception {
    DemoRepository.writeTo(repo);
    Topics topics = new Topics("c");
    Codecs codecs = Codecs.singleObject();
    var index = ModelRepository.scan(repo);
    List<ProducerRecord<String, byte[]>> records = CatalogPublisher.records(index, topics, codecs,
        CatalogPublisher.baseUri("http://models:8000/repo/"));

    ModelVersion v1 = codecs.codec(ModelVersion.class).decode(topics.catalogModels(), records.get(0).value());
    assertThat(v1.getUri()).isEqualTo("http://models:8000/repo/demo-mlp/1/model.onnx");
    assertThat(v1.getSha256()).isEqualTo(index.model("demo-mlp").orElseThrow().version("1").orElseThrow().sha256());
    ServiceModel a = codecs.codec(ServiceModel.class).decode(topics.catalogServices(), records.get(3).value());
    assertThat(a.getWeightFile().getUri()).isEqualTo("http://models:8000/repo/" + DemoRepository.adapterPath("a"));
  }

  @Test
  void shouldPercentEncodeEachPathSegmentUnderTheBaseUri() {
    assertThat(CatalogPublisher.uri("m/adapters/legal v2+fr.onnx_adapter", Optional.of("https://h")))
        .isEqualTo("https://h/m/adapters/legal%20v2%2Bfr.onnx_adapter");
    assertThat(java.net.URI.create(CatalogPublisher.uri("m/a b.onnx_adapter", Optional.of("file:///srv/models"))).getPath())
        .isEqualTo("/srv/models/m/a b.onnx_adapter");
    assertThat(CatalogPublisher.uri("m/1/model.onnx", Optional.empty())).isEqualTo("m/1/model.onnx");
  }

  @Test
  void shouldTakeNoBaseUriWhenTheSettingIsBlankAndRefuseOneThatIsNotHttpHttpsOrFile() {
    assertThat(CatalogPublisher.baseUri(null)).isEmpty();
    assertThat(CatalogPublisher.baseUri(" ")).isEmpty();
    assertThat(CatalogPublisher.baseUri("file:///srv/models")).contains("file:///srv/models");
    assertThatThrownBy(() -> CatalogPublisher.baseUri("s3://bucket/models")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("catalog.base-uri").hasMessageContaining("http, https or file");
    assertThatThrownBy(() -> CatalogPublisher.baseUri("/srv/models")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("catalog.base-uri");
    assertThatThrownBy(() -> CatalogPublisher.baseUri("http://h/models?x=1")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("query");
  }
}

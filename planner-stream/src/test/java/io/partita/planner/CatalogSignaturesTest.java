package io.partita.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.ModelVersion;
import io.partita.avro.TensorSignature;
import io.partita.common.Topics;
import io.partita.common.serde.Codecs;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.RepositoryIndex;
import io.partita.common.catalog.CatalogSignatures;
import io.partita.planner.catalog.CatalogPublisher;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogSignaturesTest {
  @TempDir Path repo;

  @Test
  void shouldPublishEachVersionsInputsAndOutputsAsTheFileDeclaresThem() throws Exception {
    DemoRepository.writeTo(repo);
    RepositoryIndex index = ModelRepository.scan(repo);
    Topics topics = new Topics("c");
    Codecs codecs = Codecs.singleObject();

    ModelVersion v1 = codecs.codec(ModelVersion.class).decode(topics.catalogModels(),
        CatalogPublisher.records(index, topics, codecs).get(0).value());

    assertThat(v1.getInputs()).singleElement().satisfies(t -> {
      assertThat(t.getName()).isEqualTo(DemoMlp.INPUT);
      assertThat(t.getDatatype()).isEqualTo("FP32");
      assertThat(t.getShape()).containsExactly(-1L, 8L);
    });
    assertThat(v1.getOutputs()).singleElement().satisfies(t -> assertThat(t.getShape()).containsExactly(-1L, 4L));
    ModelSignature fromFile = index.model(DemoMlp.MODEL_NAME).orElseThrow().version("1").orElseThrow().signature();
    ModelSignature fromCatalog = CatalogSignatures.fromCatalog(v1).orElseThrow();
    assertThat(fromCatalog.inputs()).isEqualTo(fromFile.inputs());
    assertThat(fromCatalog.outputs()).isEqualTo(fromFile.outputs());
  }

  @Test
  void shouldReadNoSignatureFromARecordWrittenBeforeVersion2() {
    ModelVersion old = TestRecords.version("m", "1", "CPU");

    assertThat(old.getInputs()).isEmpty();
    assertThat(CatalogSignatures.fromCatalog(old)).isEmpty();
  }

  @Test
  void shouldNameTheFieldOfADatatypeThatIsNotOpenInferenceProtocol() {
    ModelVersion bad = ModelVersion.newBuilder(TestRecords.version("m", "1", "CPU"))
        .setInputs(List.of(new TensorSignature("x", "FLOAT", List.of(-1L, 2L)))).build();

    assertThatThrownBy(() -> CatalogSignatures.fromCatalog(bad)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("m/1.inputs[0].datatype").hasMessageContaining("FLOAT");
  }
}

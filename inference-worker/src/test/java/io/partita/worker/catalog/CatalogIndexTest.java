package io.partita.worker.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.CatalogWeightFile;
import io.partita.avro.ModelVersion;
import io.partita.avro.ServiceModel;
import io.partita.avro.TensorSignature;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.VersionEntry;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CatalogIndexTest {
  private static final Path CACHE = Path.of("/cache");
  private static final String SHA_1 = "a".repeat(64);
  private static final String SHA_10 = "B".repeat(64);
  private static final String SHA_ADAPTER = "c".repeat(64);

  private static ModelVersion version(String model, String version, String uri, String sha256, boolean withSignature) {
    List<TensorSignature> in = withSignature ? List.of(new TensorSignature("input", "FP32", List.of(-1L, 8L))) : List.of();
    List<TensorSignature> out = withSignature ? List.of(new TensorSignature("output", "FP32", List.of(-1L, 4L))) : List.of();
    return ModelVersion.newBuilder().setModel(model).setVersion(version).setUri(uri).setSha256(sha256).setPrecision("fp16")
        .setProviders(List.of("CPU")).setAccuracy(0.5).setMemoryBytes(null).setInputs(in).setOutputs(out).build();
  }

  private static ServiceModel service(String name, String base, CatalogWeightFile file) {
    return ServiceModel.newBuilder().setName(name).setBaseModel(base).setWeightFile(file).build();
  }

  @Test
  void shouldOfferTheCatalogsVersionsWithTheirUrisAndTheCachePathsTheirFilesWillHave() {
    CatalogIndex.Folded folded = CatalogIndex.fold(
        Map.of("m/10", version("m", "10", "http://h/m/10/model.onnx", SHA_10, true),
            "m/1", version("m", "1", "file:///srv/m/1/model.onnx", SHA_1, true)),
        Map.of("m", service("m", "m", null),
            "m-a", service("m-a", "m", new CatalogWeightFile("https://h/m/adapters/a.onnx_adapter", SHA_ADAPTER, 12L))),
        CACHE, CACHE);

    RepositoryIndex index = folded.index();
    assertThat(folded.leftOut()).isEmpty();
    assertThat(index.model("m").orElseThrow().versions().keySet()).as("numeric ids in numeric order").containsExactly("1", "10");
    VersionEntry v10 = index.model("m").orElseThrow().latest();
    assertThat(v10.relativePath()).isEqualTo("http://h/m/10/model.onnx");
    assertThat(v10.modelFile()).isEqualTo(CACHE.resolve(SHA_10.toLowerCase()));
    assertThat(v10.precision().text()).isEqualTo("fp16");
    assertThat(v10.accuracy()).hasValue(0.5);
    assertThat(v10.signature().inputs().get(0).type()).isEqualTo(ElementType.FLOAT);
    assertThat(v10.signature().inputs().get(0).shape()).containsExactly(-1L, 8L);
    var a = index.serviceModel("m-a").orElseThrow().weightFile().orElseThrow();
    assertThat(a.relativePath()).isEqualTo("https://h/m/adapters/a.onnx_adapter");
    assertThat(a.path()).isEqualTo(CACHE.resolve(SHA_ADAPTER));
    assertThat(index.model("m").orElseThrow().serviceModels()).extracting(s -> s.name()).containsExactlyInAnyOrder("m", "m-a");
  }

  @Test
  void shouldLeaveOutAVersionWithoutSignatureOrWithABadSha256AndServiceModelsWithoutAVersion() {
    CatalogIndex.Folded folded = CatalogIndex.fold(
        Map.of("old/1", version("old", "1", "old/1/model.onnx", SHA_1, false),
            "bad/1", version("bad", "1", "http://h/bad/1/model.onnx", "not-hex", true)),
        Map.of("old", service("old", "old", null), "bad", service("bad", "bad", null)),
        CACHE, CACHE);

    assertThat(folded.index().models()).isEmpty();
    assertThat(folded.index().serviceModels()).isEmpty();
    assertThat(folded.leftOut()).containsOnlyKeys("old/1", "bad/1");
    assertThat(folded.leftOut().get("old/1")).contains("no signature");
    assertThat(folded.leftOut().get("bad/1")).contains("not 64 hex digits");
  }
}

package io.partita.models.repo;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelRepositoryScanTest {

  @TempDir Path root;

  @Test
  void shouldIndexTheDemoRepository() throws IOException {
    DemoRepository.writeTo(root);

    RepositoryIndex index = ModelRepository.scan(root);

    assertThat(index.models()).containsOnlyKeys("demo-mlp");
    ModelEntry model = index.model("demo-mlp").orElseThrow();
    assertThat(model.versions()).containsOnlyKeys("1", "2");
    VersionEntry v1 = model.version("1").orElseThrow();
    VersionEntry v2 = model.version("2").orElseThrow();
    assertThat(v1.precision()).isEqualTo(Precision.FP32);
    assertThat(v2.precision()).isEqualTo(Precision.FP16);
    assertThat(v1.providers()).containsExactly("CPU");
    assertThat(v1.accuracy()).hasValue(1.0);
    assertThat(v2.memoryBytes()).hasValue(3L << 20);
    assertThat(v1.sha256()).isEqualTo(Sha256.of(root.resolve("demo-mlp/1/model.onnx")));
    assertThat(v1.relativePath()).isEqualTo("demo-mlp/1/model.onnx");
    assertThat(model.latest().version()).isEqualTo("2");

    // The LoRA inputs have defaults, so ONNX Runtime hides them: clients send only "input".
    assertThat(model.signature().inputs())
        .containsExactly(TensorSpec.of(DemoMlp.INPUT, ElementType.FLOAT, -1, 8));
    assertThat(model.signature().outputs())
        .containsExactly(TensorSpec.of(DemoMlp.OUTPUT, ElementType.FLOAT, -1, 4));

    assertThat(model.signature().parameters())
        .containsExactly(
            TensorSpec.of(DemoMlp.LORA_A, ElementType.FLOAT, 8, -1),
            TensorSpec.of(DemoMlp.LORA_B, ElementType.FLOAT, -1, 16));
    assertThat(index.serviceModels()).containsOnlyKeys("demo", "demo-a", "demo-b", "demo-c");
    assertThat(index.serviceModel("demo").orElseThrow().weightFile()).isEmpty();
    ServiceModelEntry a = index.serviceModel("demo-a").orElseThrow();
    assertThat(a.baseModel()).isEqualTo("demo-mlp");
    WeightFile wf = a.weightFile().orElseThrow();
    assertThat(wf.relativePath()).isEqualTo("demo-mlp/adapters/a.onnx_adapter");
    assertThat(wf.path()).isEqualTo(root.toRealPath().resolve(wf.relativePath()));
    assertThat(wf.sha256()).isEqualTo(Sha256.of(wf.path()));
  }

  @Test
  void shouldServeABareModelUnderItsDirectoryNameWithSignatureFromTheGraph() throws IOException {
    DemoRepository.writeTo(root);
    Path file = root.resolve("bare-relu/7/model.onnx");
    Files.createDirectories(file.getParent());
    Files.write(
        file,
        new OnnxGraphBuilder("bare", "test")
            .input("pixels", DataType.FLOAT, "n", 3)
            .relu("pixels", "activations")
            .output("activations", DataType.FLOAT, "n", 3)
            .toBytes());

    RepositoryIndex index = ModelRepository.scan(root);

    ModelEntry bare = index.model("bare-relu").orElseThrow();
    assertThat(bare.manifest()).isEmpty();
    VersionEntry v = bare.version("7").orElseThrow();
    assertThat(v.precision()).isEqualTo(Precision.FP32);
    assertThat(v.providers()).containsExactly("CPU");
    assertThat(v.accuracy()).isEmpty();
    assertThat(v.signature())
        .isEqualTo(
            new ModelSignature(
                List.of(TensorSpec.of("pixels", ElementType.FLOAT, -1, 3)),
                List.of(TensorSpec.of("activations", ElementType.FLOAT, -1, 3))));
    ServiceModelEntry service = index.serviceModel("bare-relu").orElseThrow();
    assertThat(service.baseModel()).isEqualTo("bare-relu");
    assertThat(service.weightFile()).isEmpty();
    assertThat(index.serviceModels()).containsKeys("demo", "demo-a", "bare-relu");
  }

  @Test
  void shouldTakeTheInstancesAServiceModelWantsFromItsManifestAndOneOtherwise() throws IOException {
    Path file = root.resolve("wide/1/model.onnx");
    Files.createDirectories(file.getParent());
    Files.write(file, new OnnxGraphBuilder("wide", "test").input("x", DataType.FLOAT, "n", 3).relu("x", "y")
        .output("y", DataType.FLOAT, "n", 3).toBytes());
    Files.writeString(root.resolve("wide/model.yaml"), "serviceModels:\n  wide: {instances: 4}\n  wide-one: {}\n");
    Path bare = root.resolve("bare/1/model.onnx");
    Files.createDirectories(bare.getParent());
    Files.copy(file, bare);

    RepositoryIndex index = ModelRepository.scan(root);

    assertThat(index.serviceModel("wide").orElseThrow().instances()).isEqualTo(4);
    assertThat(index.serviceModel("wide-one").orElseThrow().instances()).isEqualTo(1);
    assertThat(index.serviceModel("bare").orElseThrow().instances()).isEqualTo(1);
  }

  @Test
  void shouldReadAServiceModelsRequirementsOnTheVersionFromItsManifest() throws IOException {
    Path file = root.resolve("wide/1/model.onnx");
    Files.createDirectories(file.getParent());
    Files.write(file, new OnnxGraphBuilder("wide", "test").input("x", DataType.FLOAT, "n", 3).relu("x", "y")
        .output("y", DataType.FLOAT, "n", 3).toBytes());
    Files.writeString(root.resolve("wide/model.yaml"), "serviceModels:\n"
        + "  wide:\n    objective: accuracy\n    latencyObjectiveMs: 8\n    minAccuracy: 0.8\n    memoryCapBytes: 1048576\n"
        + "  wide-plain: {}\n");

    RepositoryIndex index = ModelRepository.scan(root);

    assertThat(index.serviceModel("wide").orElseThrow().requirements()).isEqualTo(new ServiceRequirements(
        ServiceRequirements.ACCURACY, java.util.OptionalDouble.of(8.0), java.util.OptionalDouble.of(0.8),
        java.util.OptionalLong.of(1048576)));
    assertThat(index.serviceModel("wide-plain").orElseThrow().requirements()).isEqualTo(ServiceRequirements.NONE);
  }

  @Test
  void shouldIgnoreDirectoriesWithoutVersionsOrManifest() throws IOException {
    Files.createDirectories(root.resolve("notes/drafts"));
    Files.createDirectories(root.resolve(".cache/1"));

    assertThat(ModelRepository.scan(root).models()).isEmpty();
  }
}

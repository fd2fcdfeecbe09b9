package io.partita.models.repo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import io.partita.models.demo.DemoRepository;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad manifests and files: each error names the file and the field at fault. */
class ManifestErrorsTest {

  private static final String GOOD_SHA = "ab".repeat(32);

  @TempDir Path root;
  Path model;

  @BeforeEach
  void smallModel() throws IOException {
    model = root.resolve("tiny");
    writeModel(model.resolve("1/model.onnx"), 3);
    Files.createDirectories(model.resolve("adapters"));
    Files.writeString(model.resolve("adapters/x.bin"), "x");
  }

  static Stream<Arguments> badManifests() {
    return Stream.of(
        Arguments.of("versions:\n  \"1\": {precision: fp64}\n", "versions.1.precision", "fp64"),
        Arguments.of("versions:\n  \"3\": {precision: fp16}\n", "versions.3", "unknown version"),
        Arguments.of("versions:\n  \"1\": {providers: [GPU]}\n", "versions.1.providers[0]", "GPU"),
        Arguments.of("versions:\n  \"1\": {providers: []}\n", "versions.1.providers", "non-empty"),
        Arguments.of("versions:\n  \"1\": {accuracy: high}\n", "versions.1.accuracy", "number"),
        Arguments.of("versions:\n  \"1\": {memoryBytes: -5}\n", "versions.1.memoryBytes", "positive"),
        Arguments.of("versions:\n  \"1\": {sha256: abc}\n", "versions.1.sha256", "64 lowercase hex"),
        Arguments.of(
            "versions:\n  \"1\": {sha256: " + GOOD_SHA + "}\n", "versions.1.sha256", "declared"),
        Arguments.of("versions:\n  \"1\": {precison: fp16}\n", "versions.1.precison", "unknown field"),
        Arguments.of("servicemodels: {}\n", "servicemodels", "unknown field"),
        Arguments.of(
            "serviceModels:\n  t1: {weightFile: tiny/adapters/missing.bin, sha256: " + GOOD_SHA
                + "}\n",
            "serviceModels.t1.weightFile",
            "missing weight file"),
        Arguments.of(
            "serviceModels:\n  t1: {weightFile: tiny/adapters/x.bin, sha256: XYZ}\n",
            "serviceModels.t1.sha256",
            "64 lowercase hex"),
        Arguments.of(
            "serviceModels:\n  t1: {weightFile: tiny/adapters/x.bin}\n",
            "serviceModels.t1.sha256",
            "required"),
        Arguments.of(
            "serviceModels:\n  t1: {weightFile: tiny/adapters/x.bin, sha256: " + GOOD_SHA + "}\n",
            "serviceModels.t1.sha256",
            "declared " + GOOD_SHA),
        Arguments.of(
            "serviceModels:\n  t1: {weightFile: ../outside.bin, sha256: " + GOOD_SHA + "}\n",
            "serviceModels.t1.weightFile",
            "'..'"),
        Arguments.of(
            "serviceModels:\n  t1: {weightFile: /etc/passwd, sha256: " + GOOD_SHA + "}\n",
            "serviceModels.t1.weightFile",
            "absolute"),
        Arguments.of("serviceModels:\n  t1: {sha256: " + GOOD_SHA + "}\n",
            "serviceModels.t1.sha256", "no weightFile"),
        Arguments.of("serviceModels:\n  \"bad name!\": {}\n", "serviceModels.bad name!", "letters"),
        Arguments.of("serviceModels:\n  t1: {instances: 0}\n", "serviceModels.t1.instances", "from 1 to 1024, got 0"),
        Arguments.of("serviceModels:\n  t1: {instances: 2.5}\n", "serviceModels.t1.instances", "whole number"),
        Arguments.of("serviceModels:\n  t1: {instances: two}\n", "serviceModels.t1.instances", "got \"two\""),
        Arguments.of("serviceModels:\n  t1: {instances: 5000}\n", "serviceModels.t1.instances", "got 5000"),
        Arguments.of("serviceModels:\n  t1: {objective: fastest}\n", "serviceModels.t1.objective",
            "'fastest' is not one of [latency, accuracy]"),
        Arguments.of("serviceModels:\n  t1: {latencyObjectiveMs: 0}\n", "serviceModels.t1.latencyObjectiveMs",
            "milliseconds > 0, got 0"),
        Arguments.of("serviceModels:\n  t1: {latencyObjectiveMs: soon}\n", "serviceModels.t1.latencyObjectiveMs",
            "got \"soon\""),
        Arguments.of("serviceModels:\n  t1: {minAccuracy: good}\n", "serviceModels.t1.minAccuracy", "must be a number"),
        Arguments.of("serviceModels:\n  t1: {memoryCapBytes: 1.5}\n", "serviceModels.t1.memoryCapBytes",
            "positive whole number"),
        Arguments.of("serviceModels:\n  t1: {latencyObjective: 5}\n", "serviceModels.t1.latencyObjective",
            "unknown field"),
        Arguments.of("versions: [1, 2]\n", "versions", "mapping"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badManifests")
  void shouldNameTheFileAndFieldOfABadManifest(String yaml, String field, String problem)
      throws IOException {
    Path manifest = Files.writeString(model.resolve("model.yaml"), yaml);

    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining(manifest.toString())
        .hasMessageContaining(field + ": ")
        .hasMessageContaining(problem)
        .satisfies(e -> assertThat(((RepositoryException) e).field()).hasValue(field));
  }

  @Test
  void shouldReportSyntaxErrorsWithTheFile() throws IOException {
    Path manifest = Files.writeString(model.resolve("model.yaml"), "versions: {\"1\": [\n");
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining(manifest.toString())
        .hasMessageContaining("not valid YAML/JSON");
  }

  @Test
  void shouldRefuseDuplicateKeys() throws IOException {
    Files.writeString(model.resolve("model.yaml"), "versions:\n  \"1\": {}\n  \"1\": {}\n");
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining("Duplicate");
  }

  @Test
  void shouldReadAJsonManifest() throws IOException {
    String sha = Sha256.of(model.resolve("adapters/x.bin"));
    Files.writeString(
        model.resolve("model.json"),
        "{\"versions\": {\"1\": {\"precision\": \"int8\", \"providers\": [\"CUDA\", \"CPU\"]}},"
            + " \"serviceModels\": {\"tiny-x\": {\"weightFile\": \"tiny/adapters/x.bin\","
            + " \"sha256\": \"" + sha + "\"}}}");

    RepositoryIndex index = ModelRepository.scan(root);

    VersionEntry v = index.model("tiny").orElseThrow().version("1").orElseThrow();
    assertThat(v.precision()).isEqualTo(Precision.INT8);
    assertThat(v.providers()).containsExactly("CUDA", "CPU");
    assertThat(index.serviceModels()).containsOnlyKeys("tiny-x");
    assertThat(index.serviceModel("tiny-x").orElseThrow().weightFile().orElseThrow().sha256())
        .isEqualTo(sha);
  }

  @Test
  void shouldAcceptUnquotedNumericVersionIdsAndEmptyVersionEntries() throws IOException {
    writeModel(model.resolve("10/model.onnx"), 3);
    writeModel(model.resolve("2/model.onnx"), 3);
    Files.writeString(model.resolve("model.yaml"), "versions:\n  1:\n  10: {precision: bf16}\n");

    ModelEntry entry = ModelRepository.scan(root).model("tiny").orElseThrow();

    assertThat(entry.versions()).containsOnlyKeys("1", "2", "10");
    assertThat(entry.versions().keySet()).containsExactly("1", "2", "10");
    assertThat(entry.latest().version()).isEqualTo("10");
    assertThat(entry.latest().precision()).isEqualTo(Precision.BF16);
    assertThat(entry.version("1").orElseThrow().precision()).isEqualTo(Precision.FP32);
    assertThat(entry.serviceModels()).extracting(ServiceModelEntry::name).containsExactly("tiny");
  }

  @Test
  void shouldRefuseTwoManifests() throws IOException {
    Files.writeString(model.resolve("model.yaml"), "{}\n");
    Files.writeString(model.resolve("model.json"), "{}");
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining("more than one manifest");
  }

  @Test
  void shouldRefuseAServiceModelNameUsedByTwoModels() throws IOException {
    DemoRepository.writeTo(root);
    Files.writeString(model.resolve("model.yaml"), "serviceModels:\n  demo-b: {}\n");
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining("serviceModels.demo-b")
        .hasMessageContaining("already defined");
  }

  @Test
  void shouldRefuseVersionsWithDifferentSignatures() throws IOException {
    writeModel(model.resolve("2/model.onnx"), 5);
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining("2/model.onnx")
        .hasMessageContaining("same inputs and outputs");
  }

  @Test
  void shouldRefuseAModelFileThatIsNotAnOnnxProtobuf() throws IOException {
    Path broken = Files.writeString(model.resolve("1/model.onnx"), "not a model");
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining(broken.toString())
        .hasMessageContaining("cannot read it as an ONNX model");
  }

  @Test
  void shouldRefuseAnEmptyModelFileAsHavingNoGraph() throws IOException {
    Path empty = Files.write(model.resolve("1/model.onnx"), new byte[0]);
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining(empty.toString())
        .hasMessageContaining("no graph outputs");
  }

  @Test
  void shouldRefuseAVersionDirectoryThatIsASymlinkOutOfTheRoot(@TempDir Path elsewhere)
      throws IOException {
    writeModel(elsewhere.resolve("v/model.onnx"), 3);
    Files.createSymbolicLink(model.resolve("2"), elsewhere.resolve("v"));
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(UnsafePathException.class)
        .hasMessageContaining("tiny/2/model.onnx");
  }

  @Test
  void shouldRefuseAManifestWithoutVersions() throws IOException {
    Path empty = Files.createDirectories(root.resolve("empty"));
    Files.writeString(empty.resolve("model.yaml"), "description: nothing here\n");
    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining("no version directory");
  }

  @Test
  void shouldRefuseAMissingRoot() {
    assertThatThrownBy(() -> ModelRepository.scan(root.resolve("nope")))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining("not a directory");
  }

  private static void writeModel(Path file, int width) throws IOException {
    Files.createDirectories(file.getParent());
    Files.write(
        file,
        new OnnxGraphBuilder("tiny", "test")
            .input("x", DataType.FLOAT, "n", width)
            .relu("x", "y")
            .output("y", DataType.FLOAT, "n", width)
            .toBytes());
  }
}

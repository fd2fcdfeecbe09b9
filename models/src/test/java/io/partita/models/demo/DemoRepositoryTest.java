package io.partita.models.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.models.repo.ModelEntry;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.ServiceRequirements;
import io.partita.models.repo.Sha256;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoRepositoryTest {

  @TempDir Path root;

  @Test
  void shouldWriteTheDocumentedLayout() throws IOException {
    assertThat(DemoRepository.writeTo(root)).isTrue();

    assertThat(root.resolve("demo-mlp/model.yaml")).isRegularFile();
    assertThat(root.resolve("demo-mlp/1/model.onnx")).isRegularFile();
    assertThat(root.resolve("demo-mlp/2/model.onnx")).isRegularFile();
    for (String a : DemoMlp.ADAPTERS) {
      assertThat(root.resolve("demo-mlp/adapters/" + a + ".onnx_adapter")).isRegularFile();
    }
    String manifest = Files.readString(root.resolve("demo-mlp/model.yaml"));
    assertThat(manifest)
        .contains("sha256: \"" + Sha256.of(root.resolve("demo-mlp/2/model.onnx")) + "\"")
        .contains("sha256: \"" + Sha256.of(root.resolve("demo-mlp/adapters/c.onnx_adapter")) + "\"");
  }

  @Test
  void shouldLeaveACompleteRepositoryUntouchedOnSecondWrite() throws IOException {
    DemoRepository.writeTo(root);
    Map<String, byte[]> files = DemoRepository.contents();
    FileTime old = FileTime.fromMillis(1_000_000L);
    for (String rel : files.keySet()) {
      Files.setLastModifiedTime(root.resolve(rel), old);
    }

    assertThat(DemoRepository.writeTo(root)).isFalse();

    for (String rel : files.keySet()) {
      assertThat(Files.getLastModifiedTime(root.resolve(rel))).as(rel).isEqualTo(old);
    }
    try (var s = Files.walk(root)) {
      assertThat(s.filter(Files::isRegularFile).count()).isEqualTo(files.size());
    }
  }

  @Test
  void shouldRepairAMissingOrCorruptFileAndKeepTheRest() throws IOException {
    DemoRepository.writeTo(root);
    Path adapter = root.resolve(DemoRepository.adapterPath("b"));
    Path model = root.resolve("demo-mlp/1/model.onnx");
    byte[] goodModel = Files.readAllBytes(model);
    byte[] goodAdapter = Files.readAllBytes(adapter);
    Files.delete(adapter);
    Files.write(model, new byte[] {1, 2, 3});
    Path manifest = root.resolve("demo-mlp/model.yaml");
    FileTime old = FileTime.fromMillis(1_000_000L);
    Files.setLastModifiedTime(manifest, old);

    assertThat(DemoRepository.writeTo(root)).isTrue();

    assertThat(Files.readAllBytes(model)).isEqualTo(goodModel);
    assertThat(Files.readAllBytes(adapter)).isEqualTo(goodAdapter);
    assertThat(Files.getLastModifiedTime(manifest)).isEqualTo(old);
  }

  @Test
  void shouldWriteTheClusterSetWithTheHeavyModelAndItsAccuracyObjective() throws IOException {
    assertThat(DemoRepository.writeTo(root, DemoSet.CLUSTER)).isTrue();

    RepositoryIndex index = ModelRepository.scan(root);
    assertThat(index.models()).containsOnlyKeys(DemoMlp.MODEL_NAME, DemoHeavy.MODEL_NAME);
    ModelEntry heavy = index.models().get(DemoHeavy.MODEL_NAME);
    assertThat(heavy.versions()).containsOnlyKeys("1", "2");
    assertThat(heavy.versions().get("1").accuracy()).hasValue(DemoHeavy.ACCURACY_WIDE);
    assertThat(heavy.versions().get("2").accuracy()).hasValue(DemoHeavy.ACCURACY_PRUNED);
    assertThat(heavy.versions().get("1").signature()).isEqualTo(heavy.versions().get("2").signature());
    ServiceRequirements req = index.serviceModel(DemoHeavy.MODEL_NAME).orElseThrow().requirements();
    assertThat(req.objective()).isEqualTo(ServiceRequirements.ACCURACY);
    assertThat(req.latencyObjectiveMs()).hasValue(DemoRepository.HEAVY_LATENCY_OBJECTIVE_MS);
    // demo-mlp is the same as in the local set, byte for byte.
    DemoRepository.contents(DemoSet.LOCAL).forEach((rel, bytes) ->
        assertThat(DemoRepository.contents(DemoSet.CLUSTER).get(rel)).as(rel).isEqualTo(bytes));
  }

  @Test
  void shouldWriteTheHeavyLatencyObjectiveAClusterAsksForAndRefuseANonsensicalOne() throws IOException {
    DemoRepository.writeTo(root, DemoSet.CLUSTER, 12.5);

    assertThat(ModelRepository.scan(root).serviceModel(DemoHeavy.MODEL_NAME).orElseThrow().requirements()
        .latencyObjectiveMs()).hasValue(12.5);
    assertThat(DemoRepository.writeTo(root, DemoSet.CLUSTER)).as("the default objective rewrites the manifest").isTrue();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> DemoRepository.writeTo(root, DemoSet.CLUSTER, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("heavyLatencyObjectiveMs:");
  }

  @Test
  void shouldKeepTheHeavyModelOutOfTheLocalSet() throws IOException {
    DemoRepository.writeTo(root);

    assertThat(root.resolve(DemoHeavy.MODEL_NAME)).doesNotExist();
    assertThat(ModelRepository.scan(root).serviceModel(DemoMlp.BASE_SERVICE_MODEL).orElseThrow().requirements())
        .isEqualTo(ServiceRequirements.NONE);
  }

  @Test
  void shouldProduceTheSameBytesEveryTime() {
    Map<String, byte[]> first = DemoRepository.contents();
    Map<String, byte[]> second = DemoRepository.contents();
    assertThat(second.keySet()).containsExactlyElementsOf(first.keySet());
    first.forEach((rel, bytes) -> assertThat(second.get(rel)).as(rel).isEqualTo(bytes));
  }
}

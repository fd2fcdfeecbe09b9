package io.partita.models.repo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.models.demo.DemoMlp;
import io.partita.models.demo.DemoRepository;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterWriter;
import io.partita.models.lora.LoraTensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Adapters are checked against the model's overridable parameters before any run. */
class AdapterFitTest {

  @TempDir Path root;
  ModelSignature signature;

  @BeforeEach
  void demo() throws IOException {
    DemoRepository.writeTo(root);
    signature = ModelRepository.scan(root).model(DemoMlp.MODEL_NAME).orElseThrow().signature();
  }

  @Test
  void shouldAcceptTheDemoAdapters() {
    for (String a : DemoMlp.ADAPTERS) {
      assertThat(signature.checkAdapter(DemoMlp.adapter(a))).isEmpty();
    }
  }

  @Test
  void shouldNameAnUnknownParameter() {
    LoraAdapter wrong =
        LoraAdapter.of(Map.of("fc2.lora_A", new LoraTensor(new float[16 * 2], 16, 2)));
    assertThat(signature.checkAdapter(wrong))
        .hasValueSatisfying(m -> assertThat(m).contains("'fc2.lora_A'").contains("fc1.lora_A"));
  }

  @Test
  void shouldNameAParameterWithAShapeThatDoesNotFit() {
    LoraAdapter wrong =
        LoraAdapter.of(Map.of(DemoMlp.LORA_B, new LoraTensor(new float[2 * 8], 2, 8)));
    assertThat(signature.checkAdapter(wrong))
        .hasValueSatisfying(m -> assertThat(m).contains("'fc1.lora_B'").contains("[2, 8]"));
  }

  @Test
  void shouldRefuseAtScanAWeightFileThatDoesNotFitTheModel() throws IOException {
    Path bad = root.resolve("demo-mlp/adapters/bad.onnx_adapter");
    LoraAdapterWriter.write(
        LoraAdapter.of(Map.of("fc9.lora_A", new LoraTensor(new float[8], 8, 1))), bad);
    Path manifest = root.resolve("demo-mlp/model.yaml");
    Files.writeString(
        manifest,
        Files.readString(manifest)
            + "  demo-bad:\n    weightFile: demo-mlp/adapters/bad.onnx_adapter\n    sha256: \""
            + Sha256.of(bad) + "\"\n");

    assertThatThrownBy(() -> ModelRepository.scan(root))
        .isInstanceOf(RepositoryException.class)
        .hasMessageContaining("serviceModels.demo-bad.weightFile")
        .hasMessageContaining("fc9.lora_A");
  }
}

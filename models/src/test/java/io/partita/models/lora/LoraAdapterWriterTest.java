package io.partita.models.lora;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoggingLevel;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import io.partita.models.demo.DemoMlp;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoraAdapterWriterTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();

  @TempDir Path dir;

  @Test
  void shouldWriteTheTortIdentifierAndReadBackTheSameAdapter() {
    LoraAdapter adapter =
        new LoraAdapter(
            Map.of(
                "w.lora_A", new LoraTensor(new float[] {1f, -2.5f, 3e-7f}, 3, 1),
                "w.lora_B", new LoraTensor(new float[] {Float.MAX_VALUE, 0f}, 1, 2),
                "empty", new LoraTensor(new float[0], 4, 0)),
            7,
            3);

    byte[] bytes = LoraAdapterWriter.toBytes(adapter);

    assertThat(new String(bytes, 4, 4, StandardCharsets.US_ASCII)).isEqualTo("TORT");
    assertThat(LoraAdapterReader.fromBytes(bytes)).isEqualTo(adapter);
    assertThat(LoraAdapterWriter.toBytes(adapter)).isEqualTo(bytes);
  }

  @Test
  void shouldBeLoadedByOnnxRuntimeFromBytesAndFromFile() throws IOException, OrtException {
    LoraAdapter adapter = DemoMlp.adapter("a");
    Path file = dir.resolve("sub/a.onnx_adapter");
    LoraAdapterWriter.write(adapter, file);

    assertThat(LoraAdapterReader.read(file)).isEqualTo(adapter);
    try (OrtLoraAdapter fromFile = OrtLoraAdapter.create(file.toString());
        OrtLoraAdapter fromBytes = OrtLoraAdapter.create(LoraAdapterWriter.toBytes(adapter))) {
      assertThat(fromFile).isNotNull();
      assertThat(fromBytes).isNotNull();
    }
  }

  @Test
  void shouldRefuseBytesThatAreNotAnAdapter() {
    assertThatThrownBy(() -> OrtLoraAdapter.create(new byte[64])).isInstanceOf(OrtException.class);
    byte[] bytes = LoraAdapterWriter.toBytes(DemoMlp.adapter("b"));
    bytes[5] = 'X';
    assertThatThrownBy(() -> LoraAdapterReader.fromBytes(bytes))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("file identifier");
    assertThatThrownBy(() -> LoraAdapterReader.fromBytes(Arrays.copyOf(bytes, 20)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldFailAtRunTimeWithOrtExceptionWhenAParameterNameIsUnknown() throws OrtException {
    LoraAdapter wrongName =
        LoraAdapter.of(
            Map.of(
                "fc1.lora_X", DemoMlp.adapter("a").parameter(DemoMlp.LORA_A),
                DemoMlp.LORA_B, DemoMlp.adapter("a").parameter(DemoMlp.LORA_B)));
    assertRunFails(wrongName);
  }

  @Test
  void shouldFailAtRunTimeWithOrtExceptionWhenAShapeDoesNotFit() throws OrtException {
    LoraAdapter wrongShape =
        LoraAdapter.of(
            Map.of(
                DemoMlp.LORA_A, new LoraTensor(new float[5 * 2], 5, 2),
                DemoMlp.LORA_B, new LoraTensor(new float[2 * 16], 2, 16)));
    assertRunFails(wrongShape);
  }

  @Test
  void shouldRefuseInvalidTensorsAndEmptyAdapters() {
    assertThatThrownBy(() -> new LoraTensor(new float[3], 2, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs 4 values");
    assertThatThrownBy(() -> LoraAdapter.of(Map.of()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> DemoMlp.adapter("a").parameter("nope"))
        .hasMessageContaining("fc1.lora_A");
  }

  private static void assertRunFails(LoraAdapter adapter) throws OrtException {
    try (OrtSession.SessionOptions opts = new OrtSession.SessionOptions()) {
      opts.setSessionLogLevel(OrtLoggingLevel.ORT_LOGGING_LEVEL_FATAL);
      try (OrtSession session = ENV.createSession(DemoMlp.modelBytes("1"), opts);
          OrtLoraAdapter ort = OrtLoraAdapter.create(LoraAdapterWriter.toBytes(adapter));
          OnnxTensor input = OnnxTensor.createTensor(ENV, DemoMlp.sampleInput(2, 1));
          OrtSession.RunOptions run = new OrtSession.RunOptions()) {
        run.addActiveLoraAdapter(ort);
        assertThatThrownBy(
                () -> {
                  try (OrtSession.Result r = session.run(Map.of(DemoMlp.INPUT, input), run)) {
                    assertThat(r).isNull();
                  }
                })
            .isInstanceOf(OrtException.class);
      }
    }
  }
}

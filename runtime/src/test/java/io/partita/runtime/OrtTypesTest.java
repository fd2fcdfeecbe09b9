package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtProvider;
import ai.onnxruntime.OrtSession;
import io.partita.models.demo.DemoMlp;
import io.partita.models.onnx.OnnxGraphBuilder;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ExecutionProviders;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What models reads from the ONNX file agrees with what ONNX Runtime reports. */
class OrtTypesTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();

  @Test
  void shouldReadEveryElementTypeAsOnnxRuntimeReportsIt(@TempDir Path dir) throws Exception {
    List<DataType> types = List.of(DataType.FLOAT, DataType.DOUBLE, DataType.FLOAT16, DataType.INT8,
        DataType.INT16, DataType.INT32, DataType.INT64, DataType.UINT8, DataType.UINT16, DataType.UINT32,
        DataType.UINT64, DataType.BOOL, DataType.STRING);
    OnnxGraphBuilder g = new OnnxGraphBuilder("types", "test").input("x", DataType.FLOAT, "n");
    for (DataType t : types) {
      g.cast("x", t, "as_" + t.name()).output("as_" + t.name(), t, "n");
    }
    Path file = Files.write(dir.resolve("model.onnx"), g.toBytes());
    assertSameAsOrt(file);
    assertThat(ModelSignature.read(file).outputs()).extracting(TensorSpec::type).doesNotContain(ElementType.OTHER)
        .hasSize(types.size());
  }

  @Test
  void shouldKnowTheProviderNamesOnnxRuntimeKnows() {
    assertThat(ExecutionProviders.NAMES)
        .containsExactlyElementsOf(Arrays.stream(OrtProvider.values()).map(Enum::name).toList());
  }

  @ParameterizedTest
  @ValueSource(strings = {DemoMlp.VERSION_FP32, DemoMlp.VERSION_FP16})
  void shouldReadTheSameSignatureFromTheFileAsOnnxRuntimeReports(String version, @TempDir Path dir)
      throws Exception {
    assertSameAsOrt(Files.write(dir.resolve("model.onnx"), DemoMlp.modelBytes(version)));
  }

  @Test
  void shouldReadFixedSymbolicAndTypedDimsAsOnnxRuntimeDoes(@TempDir Path dir) throws Exception {
    byte[] model = new OnnxGraphBuilder("mixed", "test")
        .input("ids", DataType.INT64, "batch", 3L)
        .input("x", DataType.FLOAT, 2L, "len")
        .inputWithDefault("bias", new float[] {0f, 0f}, new long[] {2}, 2L)
        .cast("ids", DataType.FLOAT, "ids_f")
        .add("x", "bias", "y")
        .output("y", DataType.FLOAT, 2L, "len")
        .output("ids_f", DataType.FLOAT, "batch", 3L)
        .toBytes();
    Path file = Files.write(dir.resolve("model.onnx"), model);
    assertSameAsOrt(file);
    ModelSignature read = ModelSignature.read(file);
    assertThat(read.inputs()).extracting(t -> t.name()).containsExactly("ids", "x");
    assertThat(read.parameter("bias")).isPresent();
  }

  /**
   * Inputs are exactly what ONNX Runtime reports. Outputs have the same names and types; ONNX
   * Runtime may refine a symbolic output dimension by shape inference, never the other way round.
   */
  private static void assertSameAsOrt(Path file) throws Exception {
    ModelSignature fromFile = ModelSignature.read(file);
    try (OrtSession session = new SessionOpener(ENV, SessionOpener.CudaFallback.NONE)
        .open(file, SlotConfig.unpinned(1)).session()) {
      ModelSignature fromOrt = OrtTypes.signature(session);
      assertThat(fromFile.inputs()).containsExactlyInAnyOrderElementsOf(fromOrt.inputs());
      assertThat(fromFile.outputs()).hasSameSizeAs(fromOrt.outputs());
      for (TensorSpec ort : fromOrt.outputs()) {
        TensorSpec declared = fromFile.output(ort.name()).orElseThrow();
        assertThat(declared.type()).as(ort.name()).isEqualTo(ort.type());
        assertThat(declared.shape()).as(ort.name()).hasSameSizeAs(ort.shape());
        for (int i = 0; i < ort.shape().size(); i++) {
          long d = declared.shape().get(i);
          assertThat(d == -1L || d == ort.shape().get(i)).as("%s dim %d", ort.name(), i).isTrue();
        }
      }
    }
  }
}

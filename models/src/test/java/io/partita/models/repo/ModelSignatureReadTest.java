package io.partita.models.repo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.onnx.proto.OnnxMl;
import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import io.partita.models.onnx.OnnxGraphBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Signatures read from the ONNX protobuf alone (runtime's OrtTypesTest checks them against ONNX Runtime). */
class ModelSignatureReadTest {

  @TempDir Path dir;

  @Test
  void shouldSplitFedInputsFromInputsWithDefaultsInDeclaredOrder() throws IOException {
    byte[] model = new OnnxGraphBuilder("g", "test")
        .input("b", DataType.FLOAT, "n", 4L)
        .inputWithDefault("w", new float[16], new long[] {4, 4}, 4L, "r")
        .input("a", DataType.INT64, 2L)
        .matMul("b", "w", "y")
        .output("y", DataType.FLOAT, "n", 4L)
        .toBytes();
    ModelSignature s = ModelSignature.read(Files.write(dir.resolve("m.onnx"), model));
    assertThat(s.inputs()).containsExactly(
        TensorSpec.of("b", ElementType.FLOAT, -1, 4), TensorSpec.of("a", ElementType.INT64, 2));
    assertThat(s.parameters()).containsExactly(TensorSpec.of("w", ElementType.FLOAT, 4, -1));
    assertThat(s.outputs()).containsExactly(TensorSpec.of("y", ElementType.FLOAT, -1, 4));
  }

  @Test
  void shouldReadANonTensorValueAsOtherWithoutShape() throws IOException {
    OnnxMl.TypeProto sequence = OnnxMl.TypeProto.newBuilder()
        .setSequenceType(OnnxMl.TypeProto.Sequence.newBuilder()).build();
    byte[] model = OnnxMl.ModelProto.newBuilder().setIrVersion(8).setGraph(OnnxMl.GraphProto.newBuilder()
            .addInput(OnnxMl.ValueInfoProto.newBuilder().setName("s").setType(sequence))
            .addOutput(OnnxMl.ValueInfoProto.newBuilder().setName("s").setType(sequence)))
        .build().toByteArray();
    ModelSignature s = ModelSignature.read(Files.write(dir.resolve("m.onnx"), model));
    assertThat(s.inputs()).containsExactly(new TensorSpec("s", ElementType.OTHER, java.util.List.of()));
  }

  @Test
  void shouldRefuseAFileWithoutGraphOutputsOrNotAProtobuf() throws IOException {
    Path empty = Files.write(dir.resolve("empty.onnx"), new byte[0]);
    assertThatThrownBy(() -> ModelSignature.read(empty)).isInstanceOf(IOException.class)
        .hasMessageContaining("no graph outputs");
    Path text = Files.writeString(dir.resolve("text.onnx"), "not a model");
    assertThatThrownBy(() -> ModelSignature.read(text)).isInstanceOf(IOException.class);
  }
}

package io.partita.models.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.onnx.proto.OnnxMl.ModelProto;
import ai.onnx.proto.OnnxMl.TensorProto.DataType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import com.google.protobuf.InvalidProtocolBufferException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OnnxGraphBuilderTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();

  @Test
  void shouldBuildAGemmCastGraphThatOnnxRuntimeRuns() throws OrtException {
    byte[] model =
        new OnnxGraphBuilder("g", "test")
            .input("x", DataType.FLOAT, "n", 2)
            .initializerFp16("w16", new float[] {1f, 2f, 3f, 4f}, 2, 2)
            .cast("w16", DataType.FLOAT, "w")
            .initializer("b", new float[] {0.5f, -100f}, 2)
            .gemm("x", "w", "b", "pre")
            .relu("pre", "y")
            .output("y", DataType.FLOAT, "n", 2)
            .toBytes();

    try (OrtSession s = ENV.createSession(model, new OrtSession.SessionOptions());
        OnnxTensor x = OnnxTensor.createTensor(ENV, new float[][] {{1f, 1f}, {2f, 0f}});
        OrtSession.Result r = s.run(Map.of("x", x))) {
      float[][] y = (float[][]) r.get(0).getValue();
      assertThat(y[0]).containsExactly(4.5f, 0f);
      assertThat(y[1]).containsExactly(2.5f, 0f);
    }
  }

  @Test
  void shouldStampIrVersionAndOpset() throws InvalidProtocolBufferException {
    ModelProto m =
        ModelProto.parseFrom(
            new OnnxGraphBuilder("g", "p")
                .input("x", DataType.FLOAT, 1)
                .relu("x", "y")
                .output("y", DataType.FLOAT, 1)
                .toBytes());
    assertThat(m.getIrVersion()).isEqualTo(OnnxGraphBuilder.IR_VERSION);
    assertThat(m.getOpsetImport(0).getVersion()).isEqualTo(OnnxGraphBuilder.OPSET);
    assertThat(m.getProducerName()).isEqualTo("p");
  }

  @Test
  void shouldRefuseDuplicateNamesAndWrongValueCounts() {
    OnnxGraphBuilder g = new OnnxGraphBuilder("g", "p").input("x", DataType.FLOAT, 1);
    assertThatThrownBy(() -> g.relu("x", "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("already defined");
    assertThatThrownBy(() -> g.initializer("w", new float[3], 2, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs 4");
    assertThatThrownBy(() -> g.input("z", DataType.FLOAT, 1.5))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void shouldRoundToTheNearestHalf() {
    assertThat(OnnxGraphBuilder.roundToFp16(1f)).isEqualTo(1f);
    assertThat(OnnxGraphBuilder.roundToFp16(0.1f)).isEqualTo(0.099975586f);
  }
}

package io.partita.profiler.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ai.onnx.proto.OnnxMl;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class TinyModelsTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();

  @Test
  void shouldWriteAReferenceModelThatTheOnnxProtobufClassesParse() throws Exception {
    OnnxMl.ModelProto model = OnnxMl.ModelProto.parseFrom(TinyModels.referenceMlp());
    assertThat(model.getIrVersion()).isEqualTo(8);
    assertThat(model.getOpsetImport(0).getVersion()).isEqualTo(io.partita.models.onnx.OnnxGraphBuilder.OPSET);
    assertThat(model.getGraph().getNodeList()).extracting(OnnxMl.NodeProto::getOpType)
        .containsExactly("MatMul", "Relu", "MatMul", "Relu", "MatMul", "Relu");
    assertThat(model.getGraph().getInitializerList()).hasSize(3)
        .allSatisfy(t -> assertThat(t.getRawData().size()).isEqualTo(256 * 256 * 4));
    assertThat(model.getGraph().getInput(0).getType().getTensorType().getShape().getDim(0).getDimParam())
        .isEqualTo("batch");
  }

  @Test
  void shouldBuildTheSameReferenceModelEveryTime() {
    assertThat(TinyModels.referenceMlp()).isEqualTo(TinyModels.referenceMlp());
    assertThat(TinyModels.mlp(8, 1, 1)).isNotEqualTo(TinyModels.mlp(8, 1, 2));
  }

  @Test
  void shouldRunTheReferenceModelInOnnxRuntimeWithAnyBatch() throws Exception {
    try (OrtSession.SessionOptions options = new OrtSession.SessionOptions();
         OrtSession session = ENV.createSession(TinyModels.referenceMlp(), options)) {
      TensorInfo info = (TensorInfo) session.getInputInfo().get("x").getInfo();
      assertThat(info.getShape()).containsExactly(-1, 256);
      float[][] x = new float[5][256];
      for (float[] row : x) {
        Arrays.fill(row, 0.5f);
      }
      try (OnnxTensor input = OnnxTensor.createTensor(ENV, x);
           OrtSession.Result result = session.run(java.util.Map.of("x", input))) {
        float[][] y = (float[][]) result.get(0).getValue();
        assertThat(y).hasNumberOfRows(5);
        assertThat(y[0]).hasSize(256);
        for (float v : y[0]) {
          assertThat(v).isGreaterThanOrEqualTo(0f).isFinite();
        }
        assertThat(y[0]).doesNotContain(Float.NaN);
      }
    }
  }

  @Test
  void shouldRunTheIdentityProbeModel() throws Exception {
    try (OrtSession session = ENV.createSession(TinyModels.identity());
         OnnxTensor input = OnnxTensor.createTensor(ENV, new float[] {3.5f});
         OrtSession.Result result = session.run(java.util.Map.of("x", input))) {
      assertThat((float[]) result.get(0).getValue()).containsExactly(3.5f);
    }
  }

  @Test
  void shouldRefuseAnEmptyMlp() {
    assertThatThrownBy(() -> TinyModels.mlp(0, 1, 1)).hasMessageContaining("width");
  }
}

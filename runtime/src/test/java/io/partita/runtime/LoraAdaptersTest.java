package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import io.partita.models.demo.DemoMlp;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoraAdaptersTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();

  @Test
  void shouldRunWithTheAdapterActiveOnlyForThatRun() throws Exception {
    float[][] x = DemoMlp.sampleInput(3, 5);
    LoraAdapter b = DemoMlp.adapter("b");
    try (OrtSession session = new SessionOpener(ENV, SessionOpener.CudaFallback.NONE)
            .open(DemoMlp.modelBytes(DemoMlp.VERSION_FP32), SlotConfig.unpinned(1)).session();
         OrtLoraAdapter adapter = LoraAdapters.load(LoraAdapterWriter.toBytes(b))) {
      assertClose(run(session, x, adapter), DemoMlp.reference(x, b, DemoMlp.VERSION_FP32));
      assertClose(run(session, x, null), DemoMlp.reference(x, null, DemoMlp.VERSION_FP32));
    }
  }

  private static float[][] run(OrtSession session, float[][] x, OrtLoraAdapter adapter) throws Exception {
    try (OnnxTensor input = OnnxTensor.createTensor(ENV, x);
         OrtSession.RunOptions options = LoraAdapters.runOptions(adapter);
         OrtSession.Result r = session.run(Map.of(DemoMlp.INPUT, input), options)) {
      return (float[][]) r.get(0).getValue();
    }
  }

  private static void assertClose(float[][] actual, float[][] expected) {
    assertThat(actual).hasSameDimensionsAs(expected);
    for (int i = 0; i < expected.length; i++) {
      for (int j = 0; j < expected[i].length; j++) {
        assertThat(actual[i][j]).isCloseTo(expected[i][j], org.assertj.core.data.Offset.offset(1e-4f));
      }
    }
  }
}

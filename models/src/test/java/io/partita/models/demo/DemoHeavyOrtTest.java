package io.partita.models.demo;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.nio.FloatBuffer;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** demo-heavy's two versions in real ONNX Runtime against the plain-Java reference. */
class DemoHeavyOrtTest {
  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();
  private static OrtSession.SessionOptions options;

  @BeforeAll
  static void options() throws OrtException {
    options = new OrtSession.SessionOptions();
    options.setIntraOpNumThreads(1);
    options.setSessionLogLevel(ai.onnxruntime.OrtLoggingLevel.ORT_LOGGING_LEVEL_ERROR);
  }

  @AfterAll
  static void close() {
    options.close();
  }

  @ParameterizedTest
  @ValueSource(strings = {"1", "2"})
  void shouldMatchTheReferenceForABatchOfTwo(String version) throws OrtException {
    float[][][] x = {DemoHeavy.sampleInput(1), DemoHeavy.sampleInput(2)};
    try (OrtSession session = ENV.createSession(DemoHeavy.modelBytes(version), options)) {
      assertThat(session.getInputNames()).containsExactly(DemoHeavy.INPUT);
      assertThat(session.getOutputNames()).containsExactly(DemoHeavy.OUTPUT);
      float[][] y = run(session, x);
      for (int n = 0; n < x.length; n++) {
        float[] expected = DemoHeavy.reference(x[n], version);
        for (int o = 0; o < DemoHeavy.OUTPUT_SIZE; o++) {
          assertThat(y[n][o]).as("item %d output %d", n, o)
              .isCloseTo(expected[o], org.assertj.core.api.Assertions.within(1e-3f + 1e-3f * Math.abs(expected[o])));
        }
      }
    }
  }

  @Test
  void shouldAnswerDifferentlyInTheTwoVersionsFromTheSameWeights() {
    float[][] x = DemoHeavy.sampleInput(3);
    float[] wide = DemoHeavy.reference(x, DemoHeavy.VERSION_WIDE);
    float[] pruned = DemoHeavy.reference(x, DemoHeavy.VERSION_PRUNED);
    double diff = 0;
    for (int o = 0; o < wide.length; o++) {
      diff = Math.max(diff, Math.abs(wide[o] - pruned[o]));
      assertThat(Float.isFinite(wide[o]) && Float.isFinite(pruned[o])).isTrue();
    }
    assertThat(diff).as("a pruned version is another model").isGreaterThan(0.01);
  }

  private static float[][] run(OrtSession session, float[][][] x) throws OrtException {
    FloatBuffer buf = FloatBuffer.allocate(x.length * DemoHeavy.TOKENS * DemoHeavy.FEATURES);
    for (float[][] item : x) {
      for (float[] token : item) {
        buf.put(token);
      }
    }
    buf.flip();
    try (OnnxTensor input = OnnxTensor.createTensor(ENV, buf,
            new long[] {x.length, DemoHeavy.TOKENS, DemoHeavy.FEATURES});
         OrtSession.Result result = session.run(Map.of(DemoHeavy.INPUT, input))) {
      return (float[][]) result.get(0).getValue();
    }
  }
}

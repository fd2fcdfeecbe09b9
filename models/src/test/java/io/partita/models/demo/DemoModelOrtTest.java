package io.partita.models.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtLoraAdapter;
import ai.onnxruntime.OrtSession;
import io.partita.models.lora.LoraAdapter;
import io.partita.models.lora.LoraAdapterWriter;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The demo model run in real ONNX Runtime against the plain-Java reference. */
class DemoModelOrtTest {

  private static final float TOLERANCE = 1e-4f;
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
  void shouldMatchReferenceWithoutAdapter(String version) throws OrtException {
    float[][] x = DemoMlp.sampleInput(5, 7);
    try (OrtSession session = ENV.createSession(DemoMlp.modelBytes(version), options)) {
      float[][] y = run(session, x, null);
      assertClose(y, DemoMlp.reference(x, null, version));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"1", "2"})
  void shouldMatchReferenceWithEachAdapterActivatedPerRun(String version) throws OrtException {
    float[][] x = DemoMlp.sampleInput(6, 11);
    try (OrtSession session = ENV.createSession(DemoMlp.modelBytes(version), options)) {
      float[][] base = run(session, x, null);
      float[][][] outs = new float[DemoMlp.ADAPTERS.size()][][];
      for (int i = 0; i < DemoMlp.ADAPTERS.size(); i++) {
        LoraAdapter adapter = DemoMlp.adapter(DemoMlp.ADAPTERS.get(i));
        try (OrtLoraAdapter ort = OrtLoraAdapter.create(LoraAdapterWriter.toBytes(adapter))) {
          outs[i] = run(session, x, ort);
        }
        assertClose(outs[i], DemoMlp.reference(x, adapter, version));
        assertThat(maxAbsDiff(outs[i], base)).as("adapter %s vs base", i).isGreaterThan(0.05f);
      }
      assertThat(maxAbsDiff(outs[0], outs[1])).isGreaterThan(0.05f);
      assertThat(maxAbsDiff(outs[1], outs[2])).isGreaterThan(0.05f);
      assertThat(maxAbsDiff(outs[0], outs[2])).isGreaterThan(0.05f);
      // An adapter is active only for the run it was added to.
      assertClose(run(session, x, null), base);
    }
  }

  @org.junit.jupiter.api.Test
  void shouldKeepFp16VersionCloseToFp32Version() {
    float[][] x = DemoMlp.sampleInput(8, 3);
    float[][] v1 = DemoMlp.reference(x, DemoMlp.adapter("b"), "1");
    float[][] v2 = DemoMlp.reference(x, DemoMlp.adapter("b"), "2");
    assertThat(maxAbsDiff(v1, v2)).isLessThan(1e-2f).isGreaterThan(0f);
  }

  static float[][] run(OrtSession session, float[][] x, OrtLoraAdapter adapter)
      throws OrtException {
    try (OnnxTensor input = OnnxTensor.createTensor(ENV, x);
        OrtSession.RunOptions run = new OrtSession.RunOptions()) {
      if (adapter != null) {
        run.addActiveLoraAdapter(adapter);
      }
      try (OrtSession.Result r = session.run(Map.of(DemoMlp.INPUT, input), run)) {
        return (float[][]) r.get(DemoMlp.OUTPUT).orElseThrow().getValue();
      }
    }
  }

  static void assertClose(float[][] actual, float[][] expected) {
    assertThat(actual.length).isEqualTo(expected.length);
    for (int n = 0; n < actual.length; n++) {
      assertThat(actual[n].length).isEqualTo(DemoMlp.OUTPUT_SIZE);
      for (int o = 0; o < actual[n].length; o++) {
        assertThat(actual[n][o]).as("[%d][%d]", n, o).isCloseTo(expected[n][o], within(TOLERANCE));
      }
    }
  }

  static float maxAbsDiff(float[][] a, float[][] b) {
    float m = 0;
    for (int n = 0; n < a.length; n++) {
      for (int o = 0; o < a[n].length; o++) {
        m = Math.max(m, Math.abs(a[n][o] - b[n][o]));
      }
    }
    return m;
  }
}

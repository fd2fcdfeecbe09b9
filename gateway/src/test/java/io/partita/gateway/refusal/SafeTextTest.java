package io.partita.gateway.refusal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SafeTextTest {
  @Test
  void shouldDropStackTracesAndPaths() {
    String raw = "cannot load /opt/partita/models/demo/1/model.onnx: bad\n\tat ai.onnxruntime.OrtSession.<init>(OrtSession.java:74)";
    assertThat(SafeText.clean(raw)).isEqualTo("cannot load <path>: bad");
    assertThat(SafeText.clean("C:\\models\\x.onnx broke")).isEqualTo("<path> broke");
  }

  @Test
  void shouldKeepFieldMessagesAsTheyAre() {
    String m = "input 'input'.shape[1]: expected 8, got 3 (1/2 of the batch)";
    assertThat(SafeText.clean(m)).isEqualTo(m);
    assertThat(SafeText.clean(null)).isEqualTo("no message");
    assertThat(SafeText.clean("x".repeat(900))).hasSize(500);
  }
}

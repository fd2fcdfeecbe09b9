package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.platform.Fp16Conversions;
import io.partita.models.tensor.Fp16;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The repository's one FP16 conversion agrees with ONNX Runtime's. */
class Fp16AgainstOrtTest {

  @Test
  void shouldReadEveryHalfAsOnnxRuntimeDoes() {
    for (int bits = 0; bits < 0x10000; bits++) {
      short h = (short) bits;
      float ours = Fp16.toFloat(h);
      float ort = Fp16Conversions.fp16ToFloat(h);
      if (Float.isNaN(ort)) {
        assertThat(ours).as("half 0x%04x", bits).isNaN();
      } else {
        assertThat(Float.floatToIntBits(ours)).as("half 0x%04x", bits).isEqualTo(Float.floatToIntBits(ort));
      }
    }
  }

  @Test
  void shouldRoundFloatsToHalvesAsOnnxRuntimeDoes() {
    SplittableRandom random = new SplittableRandom(18);
    for (int i = 0; i < 200_000; i++) {
      // Every exponent that matters for halves, with random mantissas (ties included by chance).
      float f = Float.intBitsToFloat(random.nextInt());
      if (Float.isNaN(f)) {
        continue;
      }
      assertThat(Fp16.fromFloat(f)).as("float %s", f).isEqualTo(Fp16Conversions.floatToFp16(f));
    }
    for (int bits = 0; bits < 0x10000; bits++) {
      // Exactly halfway between two neighbouring halves: the tie-breaking rule decides.
      float a = Fp16.toFloat((short) bits);
      float b = Fp16.toFloat((short) (bits + 1));
      if (Float.isFinite(a) && Float.isFinite(b) && Math.signum(a) == Math.signum(b)) {
        float mid = (a + b) / 2;
        assertThat(Fp16.fromFloat(mid)).as("midpoint %s", mid).isEqualTo(Fp16Conversions.floatToFp16(mid));
      }
    }
  }
}

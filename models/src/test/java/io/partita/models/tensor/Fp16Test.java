package io.partita.models.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class Fp16Test {

  @Test
  void shouldRoundTripHalfPrecision() {
    for (float v : new float[] {0f, 1f, -2.5f, 65504f, 0.000061035156f, 1e-7f}) {
      float back = Fp16.toFloat(Fp16.fromFloat(v));
      assertThat(back).as("%s", v).isCloseTo(v, within(Math.abs(v) * 1e-3f + 1e-7f));
    }
    assertThat(Fp16.fromFloat(1f)).isEqualTo((short) 0x3c00);
    assertThat(Float.isInfinite(Fp16.toFloat(Fp16.fromFloat(1e6f)))).isTrue();
  }

  @Test
  void shouldGiveBackEveryHalfThatIsNotNaN() {
    for (int bits = 0; bits < 0x10000; bits++) {
      short h = (short) bits;
      float f = Fp16.toFloat(h);
      if (!Float.isNaN(f)) {
        assertThat(Fp16.fromFloat(f)).as("half 0x%04x", bits).isEqualTo(h);
      }
    }
  }

  @Test
  void shouldRoundTiesToEven() {
    // 1 + 2^-11 lies halfway between 1 (even mantissa) and 1 + 2^-10: it rounds down to 1.
    assertThat(Fp16.fromFloat(1f + (float) Math.pow(2, -11))).isEqualTo((short) 0x3c00);
    // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9: it rounds up.
    assertThat(Fp16.fromFloat(1f + 3 * (float) Math.pow(2, -11))).isEqualTo((short) 0x3c02);
    assertThat(Float.isNaN(Fp16.toFloat(Fp16.fromFloat(Float.NaN)))).isTrue();
  }
}

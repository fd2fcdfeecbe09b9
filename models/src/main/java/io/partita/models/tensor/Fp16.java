package io.partita.models.tensor;

/**
 * IEEE 754 half-precision (FP16) conversions, the one copy the gateway (JSON tensors), the ONNX
 * graph builder and the worker use: Java 17 has none ({@code Float.floatToFloat16} came in Java 20),
 * and ONNX Runtime's own ({@code Fp16Conversions}) would put ONNX Runtime on the gateway's class
 * path. Rounding is to nearest, ties to even, as ONNX Runtime's; overflow gives infinity and NaN
 * stays NaN. The runtime module's tests check both directions against ONNX Runtime's conversions.
 */
public final class Fp16 {
  /** The largest finite FP16 value. */
  public static final float MAX_VALUE = 65504f;

  private Fp16() {}

  /** The half nearest to {@code value}, as its 16 bits. */
  public static short fromFloat(float value) {
    int bits = Float.floatToIntBits(value);
    int sign = (bits >>> 16) & 0x8000;
    int exp = (bits >>> 23) & 0xff;
    int mantissa = bits & 0x7fffff;
    if (exp == 0xff) { // NaN or infinity
      return (short) (sign | 0x7c00 | (mantissa != 0 ? 0x200 : 0));
    }
    int e = exp - 127 + 15;
    if (e >= 0x1f) {
      return (short) (sign | 0x7c00); // overflow to infinity
    }
    if (e <= 0) { // subnormal or zero
      if (e < -10) {
        return (short) sign;
      }
      mantissa |= 0x800000;
      int shift = 14 - e;
      int half = mantissa >> shift;
      int rest = mantissa & ((1 << shift) - 1);
      int midpoint = 1 << (shift - 1);
      if (rest > midpoint || (rest == midpoint && (half & 1) != 0)) {
        half++;
      }
      return (short) (sign | half);
    }
    int half = sign | (e << 10) | (mantissa >> 13);
    int rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1) != 0)) {
      half++; // round to nearest even; a carry into the exponent is still correct
    }
    return (short) half;
  }

  /** The float a half stands for (exactly: every half is a float). */
  public static float toFloat(short half) {
    int h = half & 0xffff;
    int sign = (h & 0x8000) << 16;
    int exp = (h >>> 10) & 0x1f;
    int mantissa = h & 0x3ff;
    if (exp == 0) {
      if (mantissa == 0) {
        return Float.intBitsToFloat(sign);
      }
      float value = mantissa / 1024f * (float) Math.pow(2, -14);
      return sign != 0 ? -value : value;
    }
    if (exp == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mantissa << 13));
    }
    return Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mantissa << 13));
  }
}

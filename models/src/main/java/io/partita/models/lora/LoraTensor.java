package io.partita.models.lora;

import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * One named float tensor of a LoRA adapter: row-major data and its shape. The arrays are copied in
 * and out, so an instance never changes. A dimension of 0 is allowed (an empty tensor).
 */
public final class LoraTensor {

  private final float[] data;
  private final long[] shape;

  public LoraTensor(float[] data, long... shape) {
    Objects.requireNonNull(data, "data");
    Objects.requireNonNull(shape, "shape");
    long count = 1;
    for (long d : shape) {
      if (d < 0) {
        throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(shape));
      }
      count *= d;
    }
    if (count != data.length) {
      throw new IllegalArgumentException(
          "shape " + Arrays.toString(shape) + " needs " + count + " values, got " + data.length);
    }
    this.data = data.clone();
    this.shape = shape.clone();
  }

  /** A copy of the row-major values. */
  public float[] data() {
    return data.clone();
  }

  /** A copy of the shape. */
  public long[] shape() {
    return shape.clone();
  }

  public int size() {
    return data.length;
  }

  /** Puts {@code length} values from flat index {@code from} into {@code dst}, without copying the tensor first. */
  public void copyTo(FloatBuffer dst, int from, int length) {
    dst.put(data, from, length);
  }

  /** Value at a flat row-major index, without copying. */
  public float at(int flatIndex) {
    return data[flatIndex];
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LoraTensor t && Arrays.equals(data, t.data) && Arrays.equals(shape, t.shape);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(data) + Arrays.hashCode(shape);
  }

  @Override
  public String toString() {
    return "LoraTensor" + Arrays.toString(shape);
  }
}

package io.partita.models.repo;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One input or output of a model as ONNX Runtime reports it.
 *
 * @param name the tensor name
 * @param type element type
 * @param shape dimensions, {@code -1} for a dynamic (symbolic) one
 */
public record TensorSpec(String name, ElementType type, List<Long> shape) {

  public TensorSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    shape = List.copyOf(shape);
  }

  public static TensorSpec of(String name, ElementType type, long... shape) {
    return new TensorSpec(name, type, Arrays.stream(shape).boxed().toList());
  }

  /** Whether a concrete shape fits this one (same rank; equal where this one is fixed). */
  public boolean accepts(long[] concrete) {
    if (concrete.length != shape.size()) {
      return false;
    }
    for (int i = 0; i < concrete.length; i++) {
      long want = shape.get(i);
      if (concrete[i] < 0 || (want >= 0 && want != concrete[i])) {
        return false;
      }
    }
    return true;
  }
}

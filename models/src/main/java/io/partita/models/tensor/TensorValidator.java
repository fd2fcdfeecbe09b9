package io.partita.models.tensor;

import io.partita.models.repo.ElementType;
import io.partita.models.repo.TensorSpec;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks input tensors against a model's input specs before anything is produced or run; the
 * gateway and the worker share it. Every problem is reported with the name of the field at fault.
 * The element count is computed from the declared shape with overflow checks and compared with the
 * bytes actually sent, so nothing is ever allocated by a declared size.
 */
public final class TensorValidator {
  private TensorValidator() {}

  /** One tensor as sent: name, OIP datatype name, shape and the byte length of its data. */
  public record Sent(String name, String datatype, List<Long> shape, long byteLength) {}

  /** Returns null when the inputs fit, else a message naming the field at fault. */
  public static String check(Map<String, TensorSpec> specs, List<Sent> inputs) {
    Set<String> seen = new HashSet<>();
    Long batch = null;
    for (int i = 0; i < inputs.size(); i++) {
      Sent in = inputs.get(i);
      if (in.name() == null || in.name().isBlank()) {
        return "inputs[" + i + "].name: missing";
      }
      String field = "input '" + in.name() + "'";
      TensorSpec spec = specs.get(in.name());
      if (spec == null) {
        return field + ": unknown input; the model takes " + specs.keySet();
      }
      if (!seen.add(in.name())) {
        return field + ": sent twice";
      }
      ElementType type = ElementType.fromOipDatatype(in.datatype()).orElse(null);
      if (type == null) {
        return field + ".datatype: '" + in.datatype() + "' is not a known datatype";
      }
      if (type != spec.type()) {
        return field + ".datatype: expected " + spec.type().oipDatatype() + ", got " + type.oipDatatype();
      }
      List<Long> want = spec.shape();
      if (in.shape() == null || in.shape().size() != want.size()) {
        return field + ".shape: expected rank " + want.size() + " " + want + ", got " + in.shape();
      }
      long elements = 1;
      for (int d = 0; d < want.size(); d++) {
        long dim = in.shape().get(d);
        if (dim < 0) {
          return field + ".shape[" + d + "]: must not be negative, got " + dim;
        }
        if (want.get(d) >= 0 && dim != want.get(d)) {
          return field + ".shape[" + d + "]: expected " + want.get(d) + ", got " + dim;
        }
        if (d == 0 && want.get(0) < 0) {
          if (batch != null && batch != dim) {
            return field + ".shape[0]: batch size " + dim + " differs from the other inputs' " + batch;
          }
          batch = dim;
        }
        try {
          elements = Math.multiplyExact(elements, dim);
        } catch (ArithmeticException e) {
          return field + ".shape: too many elements";
        }
      }
      if (type.byteSize() == 0) {
        return field + ".datatype: " + type.oipDatatype() + " tensors are not supported";
      }
      long bytes;
      try {
        bytes = Math.multiplyExact(elements, type.byteSize());
      } catch (ArithmeticException e) {
        return field + ".shape: too many elements";
      }
      if (bytes != in.byteLength()) {
        return field + ".data: shape " + in.shape() + " needs " + elements + " " + type.oipDatatype()
            + " elements (" + bytes + " bytes), got " + in.byteLength() + " bytes";
      }
    }
    for (String name : specs.keySet()) {
      if (!seen.contains(name)) {
        return "input '" + name + "': missing";
      }
    }
    return null;
  }
}

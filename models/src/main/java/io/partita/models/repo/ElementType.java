package io.partita.models.repo;

import ai.onnxruntime.TensorInfo;
import java.util.Locale;

/**
 * Tensor element types, named as ONNX names them, with the Open Inference Protocol datatype name
 * (the {@code datatype} field of a v2 request) and the size of one element in raw little-endian
 * bytes (0 for STRING, whose elements have no fixed size).
 */
public enum ElementType {
  FLOAT("FP32", 4),
  FLOAT16("FP16", 2),
  BFLOAT16("BF16", 2),
  DOUBLE("FP64", 8),
  INT8("INT8", 1),
  INT16("INT16", 2),
  INT32("INT32", 4),
  INT64("INT64", 8),
  UINT8("UINT8", 1),
  UINT16("UINT16", 2),
  UINT32("UINT32", 4),
  UINT64("UINT64", 8),
  BOOL("BOOL", 1),
  STRING("BYTES", 0),
  OTHER("", 0);

  private final String oipDatatype;
  private final int byteSize;

  ElementType(String oipDatatype, int byteSize) {
    this.oipDatatype = oipDatatype;
    this.byteSize = byteSize;
  }

  /** Open Inference Protocol datatype ({@code FP32}, {@code INT64}, {@code BYTES}...). */
  public String oipDatatype() {
    return oipDatatype;
  }

  /** Bytes per element in raw form; 0 for STRING and OTHER. */
  public int byteSize() {
    return byteSize;
  }

  /** Maps ONNX Runtime's element type; anything unlisted is {@link #OTHER}. */
  public static ElementType fromOrt(TensorInfo.OnnxTensorType t) {
    String name = t.name().replace("ONNX_TENSOR_ELEMENT_DATA_TYPE_", "");
    try {
      return valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return OTHER;
    }
  }

  /** Looks up an Open Inference Protocol datatype name, case-sensitive as the protocol is. */
  public static java.util.Optional<ElementType> fromOipDatatype(String datatype) {
    for (ElementType t : values()) {
      if (t != OTHER && t.oipDatatype.equals(datatype)) {
        return java.util.Optional.of(t);
      }
    }
    return java.util.Optional.empty();
  }
}

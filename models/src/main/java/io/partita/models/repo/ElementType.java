package io.partita.models.repo;

import java.util.Optional;


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

  /** Maps an ONNX {@code TensorProto.DataType} number; anything unlisted is {@link #OTHER}. */
  public static ElementType fromOnnxDataType(int dataType) {
    return switch (dataType) {
      case 1 -> FLOAT;
      case 2 -> UINT8;
      case 3 -> INT8;
      case 4 -> UINT16;
      case 5 -> INT16;
      case 6 -> INT32;
      case 7 -> INT64;
      case 8 -> STRING;
      case 9 -> BOOL;
      case 10 -> FLOAT16;
      case 11 -> DOUBLE;
      case 12 -> UINT32;
      case 13 -> UINT64;
      case 16 -> BFLOAT16;
      default -> OTHER;
    };
  }

  /** Looks up an Open Inference Protocol datatype name, case-sensitive as the protocol is. */
  public static Optional<ElementType> fromOipDatatype(String datatype) {
    for (ElementType t : values()) {
      if (t != OTHER && t.oipDatatype.equals(datatype)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}

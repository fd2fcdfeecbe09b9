package io.partita.worker.serving;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.TensorInfo;
import io.partita.avro.Tensor;
import io.partita.models.repo.ElementType;
import io.partita.runtime.OrtTypes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * Converts between the wire tensor (OIP datatype, shape, little-endian bytes) and ONNX Runtime
 * tensors. Inputs must have been checked by the TensorValidator first; the byte length then
 * matches the shape.
 */
public final class OrtTensors {
  private OrtTensors() {}

  public static OnnxTensor toOrt(OrtEnvironment env, Tensor tensor) throws OrtException {
    long[] shape = tensor.getShape().stream().mapToLong(Long::longValue).toArray();
    return toOrt(env, tensor.getDatatype(), shape, List.of(tensor.getData().duplicate()));
  }

  /** One ONNX Runtime tensor holding the given parts one after the other (a stacked batch). */
  public static OnnxTensor toOrt(OrtEnvironment env, String datatype, long[] shape, List<ByteBuffer> parts) throws OrtException {
    ElementType type = ElementType.fromOipDatatype(datatype)
        .orElseThrow(() -> new IllegalArgumentException("unknown datatype " + datatype));
    int size = 0;
    for (ByteBuffer part : parts) {
      size = Math.addExact(size, part.remaining());
    }
    ByteBuffer direct = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
    for (ByteBuffer part : parts) {
      direct.put(part.duplicate().order(ByteOrder.LITTLE_ENDIAN));
    }
    direct.flip();
    return OnnxTensor.createTensor(env, direct, shape, javaType(type));
  }

  public static Tensor fromOrt(String name, OnnxTensor value) {
    if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
      throw new IllegalStateException("Partita's wire format is little-endian; big-endian hosts are not supported");
    }
    TensorInfo info = value.getInfo();
    ElementType type = OrtTypes.elementType(info.onnxType);
    // getByteBuffer() is already this output's own copy, on the heap, in native (here little-endian)
    // byte order: the wire's bytes as they are, so it is used without another copy (a PaddleOCR
    // reply is 530 KB; every copy of it is a large allocation).
    ByteBuffer out = value.getByteBuffer();
    List<Long> shape = Arrays.stream(info.getShape()).boxed().toList();
    return Tensor.newBuilder().setName(name).setDatatype(type.oipDatatype()).setShape(shape).setData(out).build();
  }

  static OnnxJavaType javaType(ElementType type) {
    return switch (type) {
      case FLOAT -> OnnxJavaType.FLOAT;
      case DOUBLE -> OnnxJavaType.DOUBLE;
      case FLOAT16 -> OnnxJavaType.FLOAT16;
      case BFLOAT16 -> OnnxJavaType.BFLOAT16;
      case INT8 -> OnnxJavaType.INT8;
      case INT16 -> OnnxJavaType.INT16;
      case INT32 -> OnnxJavaType.INT32;
      case INT64 -> OnnxJavaType.INT64;
      case UINT8 -> OnnxJavaType.UINT8;
      case BOOL -> OnnxJavaType.BOOL;
      default -> throw new IllegalArgumentException(type.oipDatatype() + " tensors are not supported");
    };
  }
}

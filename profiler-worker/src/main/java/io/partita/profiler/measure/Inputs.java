package io.partita.profiler.measure;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.TensorInfo;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Random input tensors of the shapes a session declares, for timing only (values do not matter to
 * the arithmetic of dense models; they are seeded so every run feeds the same bytes).
 *
 * <p>Shapes: a dynamic leading dimension becomes the batch size; a fixed leading dimension must
 * equal the batch size (the model's own limit), otherwise the point fails; other dynamic
 * dimensions must be given by name in {@code dims}, otherwise the point fails with a message naming
 * the dimension. Floats are uniform in [0, 1), integers in [0, 10) so that index inputs stay in
 * range of small vocabularies, booleans random. String inputs are refused.
 *
 * <p>Owns the tensors: close it to free them.
 */
public final class Inputs implements AutoCloseable {

  private final Map<String, OnnxTensor> tensors;

  private Inputs(Map<String, OnnxTensor> tensors) {
    this.tensors = tensors;
  }

  public Map<String, OnnxTensor> tensors() {
    return tensors;
  }

  /** Builds inputs for {@code batch}; closes whatever it created if it fails part way. */
  public static Inputs create(OrtEnvironment env, Map<String, NodeInfo> inputInfo, int batch, Map<String, Long> dims)
      throws OrtException {
    Map<String, OnnxTensor> tensors = new LinkedHashMap<>();
    SplittableRandom random = new SplittableRandom(42);
    try {
      for (Map.Entry<String, NodeInfo> e : inputInfo.entrySet()) {
        if (!(e.getValue().getInfo() instanceof TensorInfo info)) {
          throw new IllegalArgumentException("input '" + e.getKey() + "' is not a tensor (" + e.getValue().getInfo() + ")");
        }
        long[] shape = shapeFor(e.getKey(), info, batch, dims);
        tensors.put(e.getKey(), randomTensor(env, e.getKey(), info.type, shape, random));
      }
      return new Inputs(tensors);
    } catch (OrtException | RuntimeException ex) {
      tensors.values().forEach(OnnxTensor::close);
      throw ex;
    }
  }

  /** The concrete shape fed for one input; see the class comment for the rules. */
  static long[] shapeFor(String input, TensorInfo info, int batch, Map<String, Long> dims) {
    long[] declared = info.getShape();
    String[] names = info.getDimensionNames();
    long[] shape = new long[declared.length];
    for (int d = 0; d < declared.length; d++) {
      String name = names != null && d < names.length ? names[d] : "";
      if (declared[d] >= 0) {
        if (d == 0 && declared[d] != batch) {
          throw new IllegalArgumentException("input '" + input + "' has a fixed batch dimension of " + declared[d]
              + "; batch " + batch + " cannot be fed (use --batches " + declared[d] + ")");
        }
        shape[d] = declared[d];
      } else if (d == 0) {
        shape[d] = batch; // the batch, even if --dim names this dimension too
      } else if (name != null && !name.isEmpty() && dims.containsKey(name)) {
        shape[d] = dims.get(name);
      } else {
        throw new IllegalArgumentException("input '" + input + "' dimension " + d + " is dynamic"
            + (name == null || name.isEmpty() ? " and unnamed" : " ('" + name + "')")
            + " and has no size; give it with --dim " + (name == null || name.isEmpty() ? "NAME" : name) + "=SIZE");
      }
    }
    return shape;
  }

  /** The fixed leading dimension of any input, or -1 when all are dynamic (the model's batch limit). */
  public static long fixedBatch(Map<String, NodeInfo> inputInfo) {
    for (NodeInfo n : inputInfo.values()) {
      if (n.getInfo() instanceof TensorInfo info && info.getShape().length > 0 && info.getShape()[0] > 0) {
        return info.getShape()[0];
      }
    }
    return -1;
  }

  private static OnnxTensor randomTensor(OrtEnvironment env, String input, OnnxJavaType type, long[] shape,
                                         SplittableRandom random) throws OrtException {
    long count = Arrays.stream(shape).reduce(1, Math::multiplyExact);
    int width = switch (type) {
      case FLOAT, INT32 -> 4;
      case DOUBLE, INT64 -> 8;
      case INT8, UINT8, BOOL -> 1;
      case INT16, FLOAT16, BFLOAT16 -> 2;
      default -> throw new IllegalArgumentException("input '" + input + "' has type " + type + ", which the profiler cannot generate");
    };
    if (count * width > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("input '" + input + "' of shape " + Arrays.toString(shape) + " is over 2 GiB");
    }
    ByteBuffer buffer = ByteBuffer.allocateDirect((int) (count * width)).order(ByteOrder.nativeOrder());
    for (long i = 0; i < count; i++) {
      switch (type) {
        case FLOAT -> buffer.putFloat((float) random.nextDouble());
        case DOUBLE -> buffer.putDouble(random.nextDouble());
        case INT32 -> buffer.putInt(random.nextInt(10));
        case INT64 -> buffer.putLong(random.nextInt(10));
        case INT16 -> buffer.putShort((short) random.nextInt(10));
        case INT8, UINT8 -> buffer.put((byte) random.nextInt(10));
        case BOOL -> buffer.put((byte) random.nextInt(2));
        // half-precision values in [0, 1): sign 0, exponent below the bias, random mantissa
        case FLOAT16 -> buffer.putShort((short) ((random.nextInt(14) << 10) | random.nextInt(1024)));
        case BFLOAT16 -> buffer.putShort((short) ((Float.floatToIntBits((float) random.nextDouble()) >>> 16)));
        default -> throw new IllegalStateException("unreachable");
      }
    }
    buffer.rewind();
    return OnnxTensor.createTensor(env, buffer, shape, type);
  }

  @Override
  public void close() {
    tensors.values().forEach(OnnxTensor::close);
  }
}

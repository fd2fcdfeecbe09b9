package io.partita.gateway.oip;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.partita.avro.Tensor;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.SafeText;
import io.partita.models.repo.ElementType;
import io.partita.models.tensor.Fp16;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Open Inference Protocol JSON tensors to wire tensors and back. The {@code data} array may be
 * flat or nested (row-major). The number of elements is counted before anything is allocated and
 * must equal the product of the declared shape, so a request cannot make the gateway allocate by
 * a declared size it did not send.
 */
public final class JsonTensors {
  private JsonTensors() {}

  /** Parses one {@code inputs[i]} object; throws a {@link Refusal} (bad input) naming the field. */
  public static Tensor parse(JsonNode node, int index) {
    String field = "inputs[" + index + "]";
    if (node == null || !node.isObject()) {
      throw Refusal.badInput(field + ": must be an object with name, shape, datatype and data");
    }
    String name = text(node, "name", field);
    field = "input '" + SafeText.name(name) + "'";
    String datatype = text(node, "datatype", field);
    ElementType type = datatype(datatype, field);
    List<Long> shape = shape(node, field);
    long declared = elements(shape, field);
    JsonNode data = node.get("data");
    if (data == null || !data.isArray()) {
      throw Refusal.badInput(field + ".data: missing or not an array");
    }
    List<JsonNode> flat = new ArrayList<>();
    flatten(data, flat, field + ".data", 0);
    if (flat.size() != declared) {
      throw Refusal.badInput(field + ".data: shape " + shape + " needs " + declared + " elements, got " + flat.size());
    }
    ByteBuffer bytes = ByteBuffer.allocate(Math.multiplyExact(flat.size(), type.byteSize())).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < flat.size(); i++) {
      put(bytes, type, flat.get(i), field + ".data[" + i + "]");
    }
    bytes.flip();
    return Tensor.newBuilder().setName(name).setDatatype(type.oipDatatype()).setShape(shape).setData(bytes).build();
  }

  /** A supported OIP datatype, or refused naming {@code <field>.datatype}. */
  static ElementType datatype(String datatype, String field) {
    ElementType type = ElementType.fromOipDatatype(datatype).orElse(null);
    if (type == null || type.byteSize() == 0) {
      throw Refusal.badInput(field + ".datatype: '" + SafeText.name(datatype) + "' is not a supported datatype");
    }
    return type;
  }

  /** The {@code shape} array of a tensor object: whole numbers >= 0, or refused naming the entry. */
  static List<Long> shape(JsonNode node, String field) {
    JsonNode shapeNode = node.get("shape");
    if (shapeNode == null || !shapeNode.isArray()) {
      throw Refusal.badInput(field + ".shape: missing or not an array");
    }
    List<Long> shape = new ArrayList<>();
    for (int i = 0; i < shapeNode.size(); i++) {
      JsonNode d = shapeNode.get(i);
      if (!d.isIntegralNumber() || !d.canConvertToLong() || d.asLong() < 0) {
        throw Refusal.badInput(field + ".shape[" + i + "]: must be a whole number >= 0");
      }
      shape.add(d.asLong());
    }
    return shape;
  }

  /** The element count of a shape, computed without overflow, or refused when it does not fit a long. */
  static long elements(List<Long> shape, String field) {
    long elements = 1;
    for (long d : shape) {
      try {
        elements = Math.multiplyExact(elements, d);
      } catch (ArithmeticException e) {
        throw Refusal.badInput(field + ".shape: too many elements");
      }
    }
    return elements;
  }

  private static void flatten(JsonNode node, List<JsonNode> out, String field, int depth) {
    if (depth > 32) {
      throw Refusal.badInput(field + ": nested too deeply");
    }
    for (JsonNode child : node) {
      if (child.isArray()) {
        flatten(child, out, field, depth + 1);
      } else {
        out.add(child);
      }
    }
  }

  private static void put(ByteBuffer bytes, ElementType type, JsonNode v, String field) {
    boolean number = v.isNumber();
    switch (type) {
      case BOOL -> {
        if (!v.isBoolean()) throw Refusal.badInput(field + ": expected true or false");
        bytes.put((byte) (v.booleanValue() ? 1 : 0));
      }
      case FLOAT -> bytes.putFloat(fp32(v, number, field));
      case DOUBLE -> bytes.putDouble(fp64(v, number, field));
      case FLOAT16 -> bytes.putShort(fp16(v, number, field));
      case INT8 -> bytes.put((byte) integral(v, field, Byte.MIN_VALUE, Byte.MAX_VALUE));
      case UINT8 -> bytes.put((byte) integral(v, field, 0, 255));
      case INT16 -> bytes.putShort((short) integral(v, field, Short.MIN_VALUE, Short.MAX_VALUE));
      case UINT16 -> bytes.putShort((short) integral(v, field, 0, 65535));
      case INT32 -> bytes.putInt((int) integral(v, field, Integer.MIN_VALUE, Integer.MAX_VALUE));
      case UINT32 -> bytes.putInt((int) integral(v, field, 0, 4294967295L));
      case INT64, UINT64 -> bytes.putLong(integral(v, field, Long.MIN_VALUE, Long.MAX_VALUE));
      default -> throw Refusal.badInput(field + ": datatype " + type.oipDatatype() + " is not supported");
    }
  }

  /*
   * JSON has no infinities or NaN, so a number that only becomes one when narrowed to the tensor's
   * type was out of range: it is refused rather than sent as Inf (which comes back as NaN outputs).
   * Values too small for the type round to zero or a subnormal, as any float conversion does.
   */
  private static double fp64(JsonNode v, boolean number, String field) {
    requireNumber(number, field);
    double d = v.doubleValue();
    if (!Double.isFinite(d)) {
      throw outOfRange(v, field, "FP64", Double.MAX_VALUE);
    }
    return d;
  }

  private static float fp32(JsonNode v, boolean number, String field) {
    float f = (float) fp64(v, number, field);
    if (!Float.isFinite(f)) {
      throw outOfRange(v, field, "FP32", Float.MAX_VALUE);
    }
    return f;
  }

  private static short fp16(JsonNode v, boolean number, String field) {
    float f = fp32(v, number, field);
    short half = Fp16.fromFloat(f);
    if ((half & 0x7c00) == 0x7c00) { // rounded to infinity: past 65504 (the largest FP16) by more than half a step
      throw outOfRange(v, field, "FP16", Fp16.MAX_VALUE);
    }
    return half;
  }

  private static Refusal outOfRange(JsonNode v, String field, String type, double max) {
    String text = v.asText();
    return Refusal.badInput(field + ": " + SafeText.name(text) + " is out of the " + type + " range (largest magnitude "
        + (float) max + ")");
  }

  private static void requireNumber(boolean number, String field) {
    if (!number) {
      throw Refusal.badInput(field + ": expected a number");
    }
  }

  private static long integral(JsonNode v, String field, long min, long max) {
    if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < min || v.longValue() > max) {
      throw Refusal.badInput(field + ": expected a whole number between " + min + " and " + max);
    }
    return v.longValue();
  }

  /** A wire tensor as an OIP JSON output object with flat data. */
  public static JsonNode toJson(Tensor tensor) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    var out = f.objectNode();
    out.put("name", tensor.getName());
    out.put("datatype", tensor.getDatatype());
    ArrayNode shape = out.putArray("shape");
    tensor.getShape().forEach(shape::add);
    ArrayNode data = out.putArray("data");
    ByteBuffer b = tensor.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    ElementType type = ElementType.fromOipDatatype(tensor.getDatatype()).orElse(ElementType.OTHER);
    while (b.remaining() > 0 && type.byteSize() > 0 && b.remaining() >= type.byteSize()) {
      switch (type) {
        case BOOL -> data.add(b.get() != 0);
        case FLOAT -> data.add(b.getFloat());
        case DOUBLE -> data.add(b.getDouble());
        case FLOAT16 -> data.add(Fp16.toFloat(b.getShort()));
        case INT8 -> data.add(b.get());
        case UINT8 -> data.add(b.get() & 0xff);
        case INT16 -> data.add(b.getShort());
        case UINT16 -> data.add(b.getShort() & 0xffff);
        case INT32 -> data.add(b.getInt());
        case UINT32 -> data.add(b.getInt() & 0xffffffffL);
        case INT64, UINT64 -> data.add(b.getLong());
        default -> b.position(b.limit());
      }
    }
    return out;
  }

  private static String text(JsonNode node, String key, String field) {
    JsonNode v = node.get(key);
    if (v == null || !v.isTextual() || v.asText().isBlank()) {
      throw Refusal.badInput(field + "." + key + ": missing or not a string");
    }
    return v.asText();
  }
}

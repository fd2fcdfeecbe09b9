package io.partita.models.lora;

import static io.partita.models.lora.LoraAdapterFormat.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads an adapter file in ONNX Runtime's format back into a {@link LoraAdapter}, so a worker can
 * check an adapter's parameter names and shapes against a model before it activates it (ONNX
 * Runtime itself only fails when a run uses a wrong name or shape).
 *
 * <p>Only FLOAT parameters are supported, which is what {@link LoraAdapterWriter} writes. Every
 * offset is bounds-checked; a malformed file raises {@link IllegalArgumentException} saying what
 * is wrong. This is not a full flatbuffers verifier: ONNX Runtime runs its own when it loads the file.
 */
public final class LoraAdapterReader {

  private LoraAdapterReader() {}

  public static LoraAdapter read(Path file) throws IOException {
    try {
      return fromBytes(Files.readAllBytes(file));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  public static LoraAdapter fromBytes(byte[] bytes) {
    ByteBuffer bb = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    if (bytes.length < 8) {
      throw new IllegalArgumentException("too short to be a LoRA adapter (" + bytes.length + " bytes)");
    }
    String ident = new String(bytes, 4, 4, StandardCharsets.US_ASCII);
    if (!FILE_IDENTIFIER.equals(ident)) {
      throw new IllegalArgumentException(
          "file identifier is '" + ident + "', expected '" + FILE_IDENTIFIER + "'");
    }
    int root = uoffset(bb, 0);
    int formatVersion = intField(bb, root, ADAPTER_FORMAT_VERSION, 0);
    if (formatVersion != FORMAT_VERSION) {
      throw new IllegalArgumentException(
          "format_version is " + formatVersion + ", only " + FORMAT_VERSION + " is supported");
    }
    int adapterVersion = intField(bb, root, ADAPTER_ADAPTER_VERSION, 0);
    int modelVersion = intField(bb, root, ADAPTER_MODEL_VERSION, 0);
    int params = field(bb, root, ADAPTER_PARAMETERS);
    if (params == 0) {
      throw new IllegalArgumentException("adapter has no parameters");
    }
    int vec = uoffset(bb, params);
    int count = int32(bb, vec);
    Map<String, LoraTensor> out = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      int p = uoffset(bb, vec + 4 + 4 * i);
      String name = string(bb, p);
      int type = intField(bb, p, PARAMETER_DATA_TYPE, 0);
      if (type != DATA_TYPE_FLOAT) {
        throw new IllegalArgumentException(
            "parameter '" + name + "' has data_type " + type + "; only FLOAT (1) is supported");
      }
      long[] dims = dims(bb, p);
      int rawField = field(bb, p, PARAMETER_RAW_DATA);
      if (rawField == 0) {
        throw new IllegalArgumentException("parameter '" + name + "' has no raw_data");
      }
      int raw = uoffset(bb, rawField);
      int rawLen = int32(bb, raw);
      check(bb, raw + 4, rawLen);
      if (rawLen % Float.BYTES != 0) {
        throw new IllegalArgumentException(
            "parameter '" + name + "' raw_data length " + rawLen + " is not a multiple of 4");
      }
      float[] data = new float[rawLen / Float.BYTES];
      for (int k = 0; k < data.length; k++) {
        data[k] = bb.getFloat(raw + 4 + 4 * k);
      }
      try {
        out.put(name, new LoraTensor(data, dims));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("parameter '" + name + "': " + e.getMessage(), e);
      }
    }
    return new LoraAdapter(out, adapterVersion, modelVersion);
  }

  private static long[] dims(ByteBuffer bb, int table) {
    int f = field(bb, table, PARAMETER_DIMS);
    if (f == 0) {
      return new long[0];
    }
    int vec = uoffset(bb, f);
    int n = int32(bb, vec);
    check(bb, vec + 4, (long) n * 8);
    long[] dims = new long[n];
    for (int i = 0; i < n; i++) {
      dims[i] = bb.getLong(vec + 4 + 8 * i);
    }
    return dims;
  }

  private static String string(ByteBuffer bb, int table) {
    int f = field(bb, table, PARAMETER_NAME);
    if (f == 0) {
      return "";
    }
    int s = uoffset(bb, f);
    int len = int32(bb, s);
    check(bb, s + 4, len);
    return new String(Arrays.copyOfRange(bb.array(), s + 4, s + 4 + len), StandardCharsets.UTF_8);
  }

  /** Absolute position of field {@code slot} of the table at {@code table}, or 0 if absent. */
  private static int field(ByteBuffer bb, int table, int slot) {
    int vtable = table - int32(bb, table);
    check(bb, vtable, 4);
    int vtableSize = Short.toUnsignedInt(bb.getShort(vtable));
    int entry = 4 + 2 * slot;
    if (entry + 2 > vtableSize) {
      return 0;
    }
    check(bb, vtable, vtableSize);
    int rel = Short.toUnsignedInt(bb.getShort(vtable + entry));
    return rel == 0 ? 0 : table + rel;
  }

  private static int intField(ByteBuffer bb, int table, int slot, int dflt) {
    int f = field(bb, table, slot);
    return f == 0 ? dflt : int32(bb, f);
  }

  private static int uoffset(ByteBuffer bb, int pos) {
    long target = (long) pos + Integer.toUnsignedLong(int32(bb, pos));
    if (target >= bb.limit()) {
      throw new IllegalArgumentException("offset at byte " + pos + " points outside the file");
    }
    return (int) target;
  }

  private static int int32(ByteBuffer bb, int pos) {
    check(bb, pos, 4);
    return bb.getInt(pos);
  }

  private static void check(ByteBuffer bb, int pos, long len) {
    if (pos < 0 || len < 0 || pos + len > bb.limit()) {
      throw new IllegalArgumentException("truncated or corrupt at byte " + pos);
    }
  }
}

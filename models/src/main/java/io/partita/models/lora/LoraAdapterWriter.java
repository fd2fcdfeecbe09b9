package io.partita.models.lora;

import static io.partita.models.lora.LoraAdapterFormat.*;

import com.google.flatbuffers.FlatBufferBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * Writes a {@link LoraAdapter} in ONNX Runtime's adapter format (see {@link LoraAdapterFormat}) with
 * {@link FlatBufferBuilder} directly; no generated code is involved.
 *
 * <p>Guarantees: the output passes ONNX Runtime's verifier ({@code OrtLoraAdapter.create} loads it),
 * parameters appear in name order, and the same adapter always gives the same bytes. It does not
 * check the names or shapes against any model: ONNX Runtime only finds a mismatch when a run uses
 * the adapter.
 */
public final class LoraAdapterWriter {

  private LoraAdapterWriter() {}

  /** The adapter file's bytes. */
  public static byte[] toBytes(LoraAdapter adapter) {
    FlatBufferBuilder b = new FlatBufferBuilder(1024);
    int[] params = new int[adapter.parameters().size()];
    int i = 0;
    for (Map.Entry<String, LoraTensor> e : adapter.parameters().entrySet()) {
      params[i++] = writeParameter(b, e.getKey(), e.getValue());
    }
    int paramVector = b.createVectorOfTables(params);
    b.startTable(ADAPTER_FIELDS);
    b.addInt(ADAPTER_FORMAT_VERSION, FORMAT_VERSION, 0);
    b.addInt(ADAPTER_ADAPTER_VERSION, adapter.adapterVersion(), 0);
    b.addInt(ADAPTER_MODEL_VERSION, adapter.modelVersion(), 0);
    b.addOffset(ADAPTER_PARAMETERS, paramVector, 0);
    int root = b.endTable();
    b.finish(root, FILE_IDENTIFIER);
    return b.sizedByteArray();
  }

  /**
   * Writes the adapter to {@code file} atomically (a temporary sibling, then a rename), creating
   * parent directories.
   */
  public static void write(LoraAdapter adapter, Path file) throws IOException {
    byte[] bytes = toBytes(adapter);
    Path dir = file.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
    try {
      Files.write(tmp, bytes);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static int writeParameter(FlatBufferBuilder b, String name, LoraTensor tensor) {
    int nameOffset = b.createString(name);

    long[] shape = tensor.shape();
    b.startVector(Long.BYTES, shape.length, Long.BYTES);
    for (int d = shape.length - 1; d >= 0; d--) {
      b.addLong(shape[d]);
    }
    int dims = b.endVector();

    // raw_data is little-endian float32, 8-byte aligned (force_align: 8); flatbuffers fills
    // back to front, so bytes go in reverse.
    int n = tensor.size();
    b.startVector(1, n * Float.BYTES, 8);
    for (int k = n - 1; k >= 0; k--) {
      int bits = Float.floatToRawIntBits(tensor.at(k));
      b.addByte((byte) (bits >>> 24));
      b.addByte((byte) (bits >>> 16));
      b.addByte((byte) (bits >>> 8));
      b.addByte((byte) bits);
    }
    int raw = b.endVector();

    b.startTable(PARAMETER_FIELDS);
    b.addOffset(PARAMETER_NAME, nameOffset, 0);
    b.addOffset(PARAMETER_DIMS, dims, 0);
    b.addInt(PARAMETER_DATA_TYPE, DATA_TYPE_FLOAT, 0);
    b.addOffset(PARAMETER_RAW_DATA, raw, 0);
    return b.endTable();
  }
}

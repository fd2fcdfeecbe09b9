package io.partita.schemas;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.nio.ByteOrder;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.DatumReader;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;

/**
 * Encodes and decodes one record type with Avro's single-object encoding: the bytes {@code C3 01},
 * the 8-byte CRC-64-AVRO fingerprint of the writer's schema, then the Avro binary body.
 *
 * <p>Besides the current schema, the decoder knows every earlier version of the record listed in
 * {@link SchemaHistory}, so records written by older Partita builds still decode. Any failure to
 * decode becomes a {@link DecodeException}; nothing else escapes. Instances are thread safe.
 *
 * <p>Decoding is bounded by the bytes it reads: the body is read through {@link BoundedDecoder}, so
 * no length or count larger than the rest of the record is ever allocated, and through Avro's own
 * limits ({@link AvroLimits}, set when this class loads). A 32-byte record that declares a
 * 2-billion-element array is a {@link DecodeException}, not an {@link OutOfMemoryError}.
 */
public final class AvroCodec<T extends SpecificRecord> {
  private static final Map<Class<?>, AvroCodec<?>> CACHE = new ConcurrentHashMap<>();
  private static final int HEADER = 10;

  static {
    AvroLimits.install(); // before the first decode: Avro reads its limits once
  }

  private final Class<T> type;
  private final Schema schema;
  private final BinaryMessageEncoder<T> encoder;
  private final SpecificData data;
  /** A reader per writer-schema fingerprint: the current schema and every released version. */
  private final Map<Long, DatumReader<T>> readers = new ConcurrentHashMap<>();

  private AvroCodec(Class<T> type) {
    this.type = type;
    // The class's own SpecificData keeps logical-type conversions (a generic one loses them).
    this.data = SpecificData.getForClass(type);
    this.schema = data.getSchema(type);
    List<Schema> history = SchemaHistory.versionsOf(schema.getFullName());
    for (Schema writer : history) {
      readers.put(SchemaNormalization.parsingFingerprint64(writer), new SpecificDatumReader<>(writer, schema, data));
    }
    readers.put(SchemaNormalization.parsingFingerprint64(schema), new SpecificDatumReader<>(schema, schema, data));
    this.encoder = new BinaryMessageEncoder<>(data, schema);
  }

  /** The shared codec for a generated record class. */
  @SuppressWarnings("unchecked")
  public static <T extends SpecificRecord> AvroCodec<T> of(Class<T> type) {
    return (AvroCodec<T>) CACHE.computeIfAbsent(Objects.requireNonNull(type), k -> new AvroCodec<>(type));
  }

  public Class<T> type() {
    return type;
  }

  public Schema schema() {
    return schema;
  }

  /**
   * The record in single-object encoding, in an array of its own. The record is written into this
   * thread's reusable buffer and copied out once (Avro's {@code encode(record)} copies twice more:
   * into a buffer of its own, then here into the array), which matters for tensors: a PaddleOCR
   * reply is 530 KB, and each copy of it is a large allocation for the garbage collector.
   */
  public byte[] encode(T record) {
    EncodeBuffer out = ENCODE_BUFFER.get();
    out.reset();
    try {
      encoder.encode(record, out);
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode " + type.getSimpleName(), e);
    } finally {
      if (out.capacity() > EncodeBuffer.KEEP_BYTES) {
        ENCODE_BUFFER.remove(); // a rare huge record does not stay with the thread
      }
    }
  }

  private static final ThreadLocal<EncodeBuffer> ENCODE_BUFFER = ThreadLocal.withInitial(EncodeBuffer::new);

  /** A growable output buffer that says how much it holds on to. */
  private static final class EncodeBuffer extends ByteArrayOutputStream {
    /** Largest buffer a thread keeps between records (a few of the biggest tensors Partita sends). */
    static final int KEEP_BYTES = 4 << 20;

    EncodeBuffer() {
      super(1024);
    }

    int capacity() {
      return buf.length;
    }
  }

  /** Decodes bytes written by this or any earlier version of the record's schema. */
  public T decode(byte[] bytes) {
    if (bytes == null) {
      throw new DecodeException("empty record: expected a " + type.getSimpleName(), null);
    }
    if (bytes.length < HEADER || bytes[0] != (byte) 0xC3 || bytes[1] != (byte) 0x01) {
      throw new DecodeException("not a " + type.getSimpleName()
          + " in Avro single-object encoding (no C3 01 header and 8-byte schema fingerprint)", null);
    }
    long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    DatumReader<T> reader = readers.get(fingerprint);
    if (reader == null) {
      throw new DecodeException("not a " + type.getSimpleName() + ": unknown schema fingerprint "
          + Long.toHexString(fingerprint) + " (another record type, or a schema newer than this build)", null);
    }
    try {
      BoundedDecoder in = BoundedDecoder.over(bytes, HEADER, bytes.length - HEADER);
      return reader.read(null, in);
    } catch (Exception | StackOverflowError e) {
      // StackOverflowError: no Partita schema is recursive, so depth is bounded by the schema; the
      // catch is only a second line for a reader schema that one day is.
      throw new DecodeException(
          "not a " + type.getSimpleName() + " in Avro single-object encoding (" + describe(e) + ")", e);
    }
  }

  private static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }

  /** Reads a schema from the class path. */
  static Schema parseResource(String resource) {
    try (InputStream in = AvroCodec.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing schema resource " + resource);
      }
      return new Schema.Parser().parse(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

package io.partita.schemas;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.message.SchemaStore;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * Encodes and decodes one record type with Avro's single-object encoding: the bytes {@code C3 01},
 * the 8-byte CRC-64-AVRO fingerprint of the writer's schema, then the Avro binary body.
 *
 * <p>Besides the current schema, the decoder knows every earlier version of the record listed in
 * {@link SchemaHistory}, so records written by older Partita builds still decode. Any failure to
 * decode becomes a {@link DecodeException}; nothing else escapes. Instances are thread safe.
 */
public final class AvroCodec<T extends SpecificRecord> {
  private static final Map<Class<?>, AvroCodec<?>> CACHE = new ConcurrentHashMap<>();

  private final Class<T> type;
  private final Schema schema;
  private final BinaryMessageEncoder<T> encoder;
  private final BinaryMessageDecoder<T> decoder;

  private AvroCodec(Class<T> type) {
    this.type = type;
    // The class's own SpecificData keeps logical-type conversions (FACTS.md).
    SpecificData data = SpecificData.getForClass(type);
    this.schema = data.getSchema(type);
    SchemaStore.Cache store = new SchemaStore.Cache();
    List<Schema> history = SchemaHistory.versionsOf(schema.getFullName());
    history.forEach(store::addSchema);
    this.encoder = new BinaryMessageEncoder<>(data, schema);
    this.decoder = new BinaryMessageDecoder<>(data, schema, store);
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

  public byte[] encode(T record) {
    try {
      ByteBuffer buffer = encoder.encode(record);
      byte[] bytes = new byte[buffer.remaining()];
      buffer.get(bytes);
      return bytes;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode " + type.getSimpleName(), e);
    }
  }

  /** Decodes bytes written by this or any earlier version of the record's schema. */
  public T decode(byte[] bytes) {
    if (bytes == null) {
      throw new DecodeException("empty record: expected a " + type.getSimpleName(), null);
    }
    try {
      return decoder.decode(bytes);
    } catch (Exception | StackOverflowError e) {
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

package io.partita.common.serde;

import io.partita.schemas.AvroLimits;
import io.partita.schemas.BoundedDecoder;
import io.partita.schemas.DecodeException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;

/**
 * The Confluent wire format, which registry-aware clients in every language read: a zero magic
 * byte, the 4-byte big-endian schema id, then the Avro binary body. The writer's schema is
 * registered under the subject {@code <topic>-value} (the usual topic-name strategy); a reader
 * resolves the id to the writer's schema and reads it into this build's record class with Avro's
 * schema resolution, so older and newer writers are read as long as the registry's compatibility
 * rule let their schemas in.
 *
 * <p>Bytes that are not in this format, or that name an id the registry does not know, are a
 * {@link DecodeException} (dead-lettered by callers). A registry that cannot be reached is a
 * {@link SchemaRegistryException}: an infrastructure fault, not a bad record.
 */
final class RegistryCodec<T extends SpecificRecord> implements RecordCodec<T> {
  static final byte MAGIC = 0;

  private final Class<T> type;
  private final SpecificData data;
  private final Schema schema;
  private final SpecificDatumWriter<T> writer;
  private final SchemaRegistryClient registry;
  private final Map<Integer, DatumReader<T>> readers = new ConcurrentHashMap<>();

  RegistryCodec(Class<T> type, SchemaRegistryClient registry) {
    AvroLimits.install();
    this.type = type;
    this.data = SpecificData.getForClass(type);
    this.schema = data.getSchema(type);
    this.writer = new SpecificDatumWriter<>(schema, data);
    this.registry = registry;
  }

  static String subject(String topic) {
    return topic + "-value";
  }

  @Override
  public byte[] encode(String topic, T record) {
    int id = registry.idOf(subject(topic), schema);
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    out.write(MAGIC);
    out.writeBytes(ByteBuffer.allocate(4).putInt(id).array());
    try {
      BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
      writer.write(record, encoder);
      encoder.flush();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot encode " + type.getSimpleName(), e);
    }
    return out.toByteArray();
  }

  @Override
  public T decode(String topic, byte[] bytes) {
    if (bytes == null || bytes.length < 5 || bytes[0] != MAGIC) {
      throw new DecodeException("not a " + type.getSimpleName() + " in the schema-registry wire format (magic byte 0, 4-byte schema id, Avro body)", null);
    }
    int id = ByteBuffer.wrap(bytes, 1, 4).getInt();
    DatumReader<T> reader = readers.get(id);
    if (reader == null) {
      Schema writerSchema = registry.schema(id).orElseThrow(() -> new DecodeException(
          "schema id " + id + " of a " + type.getSimpleName() + " record is unknown to the registry at " + registry.settings().url(), null));
      reader = new SpecificDatumReader<>(writerSchema, schema, data);
      readers.putIfAbsent(id, reader);
    }
    try {
      // Bounded by the bytes left and by Avro's limits (AvroLimits, installed by AvroCodec's loading).
      return reader.read(null, BoundedDecoder.over(bytes, 5, bytes.length - 5));
    } catch (IOException | RuntimeException | StackOverflowError e) {
      throw new DecodeException("not a " + type.getSimpleName() + " written with schema id " + id + " (" + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")", e);
    }
  }
}

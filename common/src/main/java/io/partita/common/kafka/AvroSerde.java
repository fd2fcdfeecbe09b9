package io.partita.common.kafka;

import io.partita.schemas.AvroCodec;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka serde over {@link AvroCodec} (single-object encoding). Deserializing bytes that are not a
 * record of this type throws {@link io.partita.schemas.DecodeException}; consumers that must
 * dead-letter such records read raw bytes and call the codec themselves.
 */
public final class AvroSerde<T extends SpecificRecord> implements Serde<T>, Serializer<T>, Deserializer<T> {
  private final AvroCodec<T> codec;

  public AvroSerde(Class<T> type) {
    this.codec = AvroCodec.of(type);
  }

  public static <T extends SpecificRecord> AvroSerde<T> of(Class<T> type) {
    return new AvroSerde<>(type);
  }

  public AvroCodec<T> codec() {
    return codec;
  }

  @Override
  public byte[] serialize(String topic, T data) {
    return data == null ? null : codec.encode(data);
  }

  @Override
  public T deserialize(String topic, byte[] data) {
    return data == null ? null : codec.decode(data);
  }

  @Override
  public Serializer<T> serializer() {
    return this;
  }

  @Override
  public Deserializer<T> deserializer() {
    return this;
  }

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {}

  @Override
  public void close() {}
}

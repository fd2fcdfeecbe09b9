package io.partita.common;

import io.partita.common.serde.RecordCodec;
import java.util.Objects;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A topic bound to the codec of its values, as kafka-streams-examples' {@code Topic<K, V>} binds a
 * name to its serdes: a call site that holds a {@code Topic<TimingEvent>} cannot write or read that
 * topic with another record type's codec. Keys are always strings. Handles come only from
 * {@link Topics}, the one class that names topics; the name is the same string its untyped method
 * gives, and the bytes are the codec's, so holding a handle changes nothing on the wire.
 *
 * @param name the topic's full name (prefix included)
 * @param codec how its values are written ({@code serde.mode})
 * @param <V> the record type of its values
 */
public record Topic<V>(String name, RecordCodec<V> codec) {
  public Topic {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(codec, "codec");
  }

  /** The value's bytes on this topic. */
  public byte[] encode(V value) {
    return codec.encode(name, value);
  }

  /**
   * The value these bytes hold.
   *
   * @throws io.partita.schemas.DecodeException when they are not a record of this topic's type
   */
  public V decode(byte[] bytes) {
    return codec.decode(name, bytes);
  }

  /** A record for this topic; a null value is a tombstone. */
  public ProducerRecord<String, byte[]> record(String key, V value) {
    return new ProducerRecord<>(name, key, value == null ? null : encode(value));
  }

  /** A record for one partition of this topic; a null value is a tombstone. */
  public ProducerRecord<String, byte[]> record(Integer partition, String key, V value) {
    return new ProducerRecord<>(name, partition, key, value == null ? null : encode(value));
  }

  @Override
  public String toString() {
    return name;
  }
}

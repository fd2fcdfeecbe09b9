package io.partita.common.serde;

/**
 * Turns one record type into the bytes of a Kafka record value and back. Decoding bytes that are
 * not such a record throws {@link io.partita.schemas.DecodeException}, which callers dead-letter.
 * The topic is passed because registry-based formats name their schema subject after it.
 */
public interface RecordCodec<T> {
  byte[] encode(String topic, T record);

  T decode(String topic, byte[] bytes);
}

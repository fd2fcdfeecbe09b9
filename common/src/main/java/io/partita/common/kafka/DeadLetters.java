package io.partita.common.kafka;

import io.partita.avro.DeadLetter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** Builds dead letters that say where a record came from and why it could not be used. */
public final class DeadLetters {
  private DeadLetters() {}

  /**
   * A record as it was read, wherever it was read: a consumer's {@link ConsumerRecord}, or a Kafka
   * Streams record with its metadata (partition and offset -1 where the record has none, as one a
   * punctuation forwarded).
   */
  public record Source(String topic, int partition, long offset, String key, byte[] value, Headers headers) {
    public static Source of(ConsumerRecord<String, byte[]> record) {
      return new Source(record.topic(), record.partition(), record.offset(), record.key(), record.value(), record.headers());
    }
  }

  public static DeadLetter of(ConsumerRecord<String, byte[]> record, Throwable error, String component, long nowMs) {
    return of(Source.of(record), error, component, nowMs);
  }

  /**
   * @param timestampMs when the record was found unusable (the clock of the component; the record's
   *     own timestamp in a Kafka Streams processor, whose time is stream time)
   */
  public static DeadLetter of(Source record, Throwable error, String component, long timestampMs) {
    Map<String, String> headers = new LinkedHashMap<>();
    for (Header header : record.headers()) {
      headers.put(header.key(), header.value() == null ? "" : new String(header.value(), StandardCharsets.UTF_8));
    }
    return DeadLetter.newBuilder()
        .setTopic(record.topic())
        .setPartition(record.partition())
        .setOffset(record.offset())
        .setKey(record.key() == null ? null : ByteBuffer.wrap(record.key().getBytes(StandardCharsets.UTF_8)))
        .setValue(record.value() == null ? null : ByteBuffer.wrap(record.value()))
        .setHeaders(headers)
        .setError(String.valueOf(error.getMessage()))
        .setErrorClass(error.getClass().getSimpleName())
        .setComponent(component)
        .setTimestamp(timestampMs)
        .build();
  }
}

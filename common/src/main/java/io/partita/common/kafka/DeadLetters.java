package io.partita.common.kafka;

import io.partita.avro.DeadLetter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** Builds dead letters that say where a record came from and why it could not be used. */
public final class DeadLetters {
  private DeadLetters() {}

  public static DeadLetter of(ConsumerRecord<String, byte[]> record, Throwable error, String component, long nowMs) {
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
        .setTimestamp(nowMs)
        .build();
  }
}

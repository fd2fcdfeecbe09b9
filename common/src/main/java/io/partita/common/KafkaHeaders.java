package io.partita.common;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** The names of the record headers Partita reads and writes, and how to read them. */
public final class KafkaHeaders {
  /** Correlates a reply with its request; a reply carries its request's value. */
  public static final String CORRELATION_ID = "correlation-id";
  /** The topic the reply goes to. */
  public static final String REPLY_TO = "reply-to";
  /** Epoch milliseconds after which the request is answered DEADLINE_EXCEEDED without running. */
  public static final String DEADLINE = "deadline";
  /**
   * The service model a request asks for, beside the record's own {@code serviceModel}: lets a
   * consumer of a base model's topic see it without decoding. The record wins; a request whose
   * header differs from its record is refused ({@code BAD_INPUT}).
   */
  public static final String SERVICE_MODEL = "service-model";
  /** W3C trace context, carried from HTTP into Kafka and back. */
  public static final String TRACEPARENT = "traceparent";
  /**
   * On a reply: when the worker handled its request, as epoch microseconds ({@link EpochMicros}),
   * {@code read=..;decoded=..;run-start=..;run-end=..;encoded=..}. Diagnostic: it says where a
   * round trip's time went (read: the worker loop took the record; decoded; run-start and run-end:
   * the batch's ONNX Runtime call; encoded: the reply, just before it is produced). A request
   * answered without running has only {@code read}, {@code decoded} and {@code encoded}.
   */
  public static final String STAGES = "partita-stages";

  private KafkaHeaders() {}

  /** The last value of a header as UTF-8, or null. */
  public static String get(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
  }

  public static void put(Headers headers, String name, String value) {
    if (value != null) {
      headers.remove(name);
      headers.add(name, value.getBytes(StandardCharsets.UTF_8));
    }
  }
}

package io.partita.worker.kafka;

import io.partita.common.KafkaHeaders;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * The headers of a request record the worker reads, taken in one pass over the record's headers
 * (the last value of each wins, as {@link KafkaHeaders#get}); any may be null. One pass instead of
 * a lookup per header: the loop reads them for every request.
 *
 * @param replyTo where the answer goes
 * @param correlationId copied to the answer
 * @param serviceModel the service model the sender named beside the record
 * @param deadline epoch milliseconds as sent, not parsed
 * @param traceparent W3C trace context, copied to the answer
 */
record RequestHeaders(String replyTo, String correlationId, String serviceModel, String deadline, String traceparent) {

  static RequestHeaders of(Headers headers) {
    String replyTo = null;
    String correlationId = null;
    String serviceModel = null;
    String deadline = null;
    String traceparent = null;
    for (Header h : headers) {
      switch (h.key()) {
        case KafkaHeaders.REPLY_TO -> replyTo = text(h);
        case KafkaHeaders.CORRELATION_ID -> correlationId = text(h);
        case KafkaHeaders.SERVICE_MODEL -> serviceModel = text(h);
        case KafkaHeaders.DEADLINE -> deadline = text(h);
        case KafkaHeaders.TRACEPARENT -> traceparent = text(h);
        default -> { }
      }
    }
    return new RequestHeaders(replyTo, correlationId, serviceModel, deadline, traceparent);
  }

  private static String text(Header h) {
    return h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}

package io.partita.worker.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.common.KafkaHeaders;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class RequestHeadersTest {

  @Test
  void shouldReadEveryHeaderTheWorkerUsesInOnePass() {
    RecordHeaders headers = new RecordHeaders();
    headers.add(KafkaHeaders.REPLY_TO, bytes("bench.replies.c1"));
    headers.add(KafkaHeaders.CORRELATION_ID, bytes("c1-7"));
    headers.add(KafkaHeaders.SERVICE_MODEL, bytes("demo-a"));
    headers.add(KafkaHeaders.DEADLINE, bytes("1767225600000"));
    headers.add(KafkaHeaders.TRACEPARENT, bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
    headers.add("something-else", bytes("ignored"));

    RequestHeaders read = RequestHeaders.of(headers);

    assertThat(read).isEqualTo(new RequestHeaders("bench.replies.c1", "c1-7", "demo-a", "1767225600000",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
  }

  @Test
  void shouldTakeTheLastValueOfARepeatedHeaderAsKafkaHeadersGetDoes() {
    RecordHeaders headers = new RecordHeaders();
    headers.add(KafkaHeaders.REPLY_TO, bytes("first"));
    headers.add(KafkaHeaders.REPLY_TO, bytes("second"));

    assertThat(RequestHeaders.of(headers).replyTo())
        .isEqualTo("second")
        .isEqualTo(KafkaHeaders.get(headers, KafkaHeaders.REPLY_TO));
  }

  @Test
  void shouldLeaveMissingAndNullValuedHeadersNull() {
    RecordHeaders headers = new RecordHeaders();
    headers.add(KafkaHeaders.CORRELATION_ID, null);

    assertThat(RequestHeaders.of(headers)).isEqualTo(new RequestHeaders(null, null, null, null, null));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}

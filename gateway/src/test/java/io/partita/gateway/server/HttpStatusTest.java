package io.partita.gateway.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.ErrorCode;
import io.partita.gateway.refusal.Refusal.Kind;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HttpStatusTest {

  @Test
  void shouldAnswerEachErrorReplyCodeWithTheStatusTheGatewayDocuments() {
    // docs/gateway.md: BAD_INPUT 400, NOT_FOUND 404, OVERLOADED 429, MODEL_ERROR and UNKNOWN 500,
    // NOT_READY 503, DEADLINE_EXCEEDED 504.
    Map<ErrorCode, Integer> expected = Map.of(
        ErrorCode.BAD_INPUT, 400, ErrorCode.NOT_FOUND, 404, ErrorCode.OVERLOADED, 429, ErrorCode.MODEL_ERROR, 500,
        ErrorCode.UNKNOWN, 500, ErrorCode.NOT_READY, 503, ErrorCode.DEADLINE_EXCEEDED, 504);
    assertThat(expected).hasSize(ErrorCode.values().length);
    expected.forEach((code, status) -> assertThat(HttpStatus.of(code)).as("%s", code).isEqualTo(status));
  }

  @Test
  void shouldGiveEveryRefusalKindAnErrorStatusOfItsOwnClass() {
    // The client's mistakes are 4xx, the serving side's failures 5xx.
    for (Kind kind : Kind.values()) {
      boolean clients = switch (kind) {
        case BAD_INPUT, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, WRONG_METHOD, CONFLICT, TOO_LARGE, OVERLOADED, CLIENT_GONE -> true;
        case NOT_READY, DEADLINE_EXCEEDED, MODEL_ERROR, INTERNAL -> false;
      };
      assertThat(HttpStatus.of(kind)).as("%s", kind).isBetween(clients ? 400 : 500, clients ? 499 : 599);
    }
  }
}

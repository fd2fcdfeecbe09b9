package io.partita.gateway.server;

import io.partita.avro.ErrorCode;
import io.partita.gateway.health.Readiness;
import io.partita.gateway.refusal.Refusal;

/**
 * How the gateway's answers are said in HTTP: the one place a refusal's kind, an error reply's code
 * or a readiness verdict becomes a status, for every HTTP surface on this transport (the OIP
 * endpoints, the batch job endpoints, the dashboard). gRPC says the same kinds in its own codes
 * ({@code GrpcApi.code}).
 */
public final class HttpStatus {
  private HttpStatus() {}

  /** The status of a refusal's kind. */
  public static int of(Refusal.Kind kind) {
    return switch (kind) {
      case BAD_INPUT -> 400;
      case UNAUTHORIZED -> 401;
      case FORBIDDEN -> 403;
      case NOT_FOUND -> 404;
      case WRONG_METHOD -> 405;
      case CONFLICT -> 409;
      case TOO_LARGE -> 413;
      case OVERLOADED -> 429;
      case CLIENT_GONE -> 499; // the client went away before it was answered (as nginx logs it)
      case NOT_READY -> 503;
      case DEADLINE_EXCEEDED -> 504;
      case MODEL_ERROR, INTERNAL -> 500;
    };
  }

  /** The status of an error reply's code (a batch job item's result tells it). */
  public static int of(ErrorCode code) {
    return of(Refusal.Kind.of(code));
  }

  /** The status of a health answer: 200 when ready, else 503. */
  public static int of(Readiness.Verdict verdict) {
    return verdict.ready() ? 200 : 503;
  }
}

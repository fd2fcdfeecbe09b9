package io.partita.gateway.refusal;

import io.partita.avro.ErrorCode;

/**
 * The gateway's answer to a call it will not or cannot serve: a {@link Kind} and a message safe to
 * show (no stack traces, no paths), with no transport in it. Each transport says a kind in its own
 * words in one place (HTTP: {@code server/HttpStatus}; gRPC: {@code GrpcApi.code}). Names from
 * outside are cut where they are put in the message ({@link SafeText#name}); as a last guard the
 * message itself is cut to {@link #MAX_MESSAGE} characters, so no refusal echoes a huge input.
 */
public final class Refusal extends RuntimeException {
  /** Longest message a refusal carries. */
  public static final int MAX_MESSAGE = 2000;

  /** What kind of refusal: what went wrong, in the caller's terms. */
  public enum Kind {
    /** The request is wrong: a field, a shape, a value; the message names it. */
    BAD_INPUT,
    /** No API key was presented where one is needed. */
    UNAUTHORIZED,
    /** The key is not known, or may not use that model. */
    FORBIDDEN,
    /** No such model, version, job, file or endpoint. */
    NOT_FOUND,
    /** The endpoint does not take this kind of call (an HTTP method it does not serve). */
    WRONG_METHOD,
    /** The call clashes with what is going on: a request id already in flight, a job not in the right state. */
    CONFLICT,
    /** The request is over a size limit (a body, a job's items, a file). */
    TOO_LARGE,
    /** Too much is in flight; try again shortly. */
    OVERLOADED,
    /** The client went away before its call could be answered; nobody reads the answer. */
    CLIENT_GONE,
    /** Nothing can serve the call now: no route, no ready instance, a request that could not be queued. */
    NOT_READY,
    /** No reply came before the call's deadline. */
    DEADLINE_EXCEEDED,
    /** The model failed on the request (an error reply from the worker). */
    MODEL_ERROR,
    /** Something failed that is nobody's fault in particular (an unknown error reply, a gateway fault). */
    INTERNAL;

    /** The kind of an error reply's code. */
    public static Kind of(ErrorCode code) {
      return switch (code) {
        case BAD_INPUT -> BAD_INPUT;
        case NOT_FOUND -> NOT_FOUND;
        case NOT_READY -> NOT_READY;
        case DEADLINE_EXCEEDED -> DEADLINE_EXCEEDED;
        case OVERLOADED -> OVERLOADED;
        case MODEL_ERROR -> MODEL_ERROR;
        case UNKNOWN -> INTERNAL;
      };
    }
  }

  private final Kind kind;

  public Refusal(Kind kind, String message) {
    super(message != null && message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) + "..." : message, null, false, false);
    this.kind = kind;
  }

  /** The client closed the connection before its request was read (not an error of the gateway). */
  public static Refusal clientGone() {
    return new Refusal(Kind.CLIENT_GONE, "the client closed the connection before its request was read");
  }

  public static Refusal badInput(String message) {
    return new Refusal(Kind.BAD_INPUT, message);
  }

  public static Refusal notFound(String message) {
    return new Refusal(Kind.NOT_FOUND, message);
  }

  public Kind kind() {
    return kind;
  }
}

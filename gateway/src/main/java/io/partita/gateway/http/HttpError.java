package io.partita.gateway.http;

/**
 * An HTTP error answer: a status and a message safe to show (no stack traces, no paths). Names
 * from outside are cut where they are put in the message ({@link SafeText#name}); as a last guard
 * the message itself is cut to {@link #MAX_MESSAGE} characters, so no refusal echoes a huge input.
 */
public final class HttpError extends RuntimeException {
  /** Longest message an answer carries. */
  public static final int MAX_MESSAGE = 2000;
  /** The status of a call whose client went away before it could be answered (as nginx logs it). */
  public static final int CLIENT_CLOSED = 499;

  private final int status;

  public HttpError(int status, String message) {
    super(message != null && message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) + "..." : message, null, false, false);
    this.status = status;
  }

  /** The client closed the connection before its request was read (not an error of the gateway). */
  public static HttpError clientClosed() {
    return new HttpError(CLIENT_CLOSED, "the client closed the connection before its request was read");
  }

  public static HttpError badRequest(String message) {
    return new HttpError(400, message);
  }

  public static HttpError notFound(String message) {
    return new HttpError(404, message);
  }

  public int status() {
    return status;
  }
}

package io.partita.gateway.http;

/** An HTTP error answer: a status and a message safe to show (no stack traces, no paths). */
public final class HttpError extends RuntimeException {
  private final int status;

  public HttpError(int status, String message) {
    super(message, null, false, false);
    this.status = status;
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

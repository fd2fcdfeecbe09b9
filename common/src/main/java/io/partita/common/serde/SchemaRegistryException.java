package io.partita.common.serde;

/**
 * The schema registry could not be used: unreachable, answering with an error, or refusing a
 * schema (an incompatible change is HTTP 409). An infrastructure fault, not a bad record: callers
 * stop loudly rather than dead-letter. {@link #status()} is the HTTP status, or -1 when none came.
 */
public final class SchemaRegistryException extends RuntimeException {
  private final int status;

  public SchemaRegistryException(String message, int status, Throwable cause) {
    super(message, cause);
    this.status = status;
  }

  public int status() {
    return status;
  }
}

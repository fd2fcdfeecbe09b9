package io.partita.schemas;

/**
 * Bytes that are not a record of the expected type: not single-object encoded, an unknown schema
 * fingerprint, or a body that does not parse. Callers dead-letter the record; they never crash.
 */
public final class DecodeException extends RuntimeException {
  public DecodeException(String message, Throwable cause) {
    super(message, cause);
  }
}

package io.partita.worker.serving;

import io.partita.avro.ErrorCode;

/** A request that cannot run on this slot now, with the code its reply carries (NOT_READY or OVERLOADED). */
public final class NotRunnableException extends Exception {
  private final ErrorCode code;

  public NotRunnableException(ErrorCode code, String message) {
    super(message, null, false, false);
    this.code = code;
  }

  public ErrorCode code() {
    return code;
  }
}

package io.partita.gateway.routing;

/** A request that has nowhere to go (no route, no ready instance); the message says why. */
public final class NotRoutableException extends RuntimeException {
  public NotRoutableException(String message) {
    super(message, null, false, false);
  }
}

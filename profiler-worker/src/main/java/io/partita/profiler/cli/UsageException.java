package io.partita.profiler.cli;

/** A command line the profiler cannot act on; the message names the flag and how to fix it. */
public final class UsageException extends Exception {
  public UsageException(String message) {
    super(message);
  }
}

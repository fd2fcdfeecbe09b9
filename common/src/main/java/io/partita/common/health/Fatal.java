package io.partita.common.health;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a loop does with a fault the process cannot survive. A {@link VirtualMachineError} (a real
 * out-of-memory, a stack overflow outside a bounded decoder, an internal JVM error) leaves the heap
 * or a thread in a state nothing should keep serving from, so the process ends with a non-zero exit
 * code and a supervisor restarts it clean: never a live process with a dead loop.
 *
 * <p>{@link Runtime#halt(int)} is used rather than {@link System#exit(int)}: shutdown hooks may
 * need the memory that is gone, or wait on the very thread that failed.
 */
public final class Fatal {
  /** The exit status of a process ended by {@link #haltIfFatal}: EX_SOFTWARE from sysexits.h. */
  public static final int EXIT_STATUS = 70;

  private static final Logger log = LoggerFactory.getLogger(Fatal.class);
  private static volatile Halter halter = status -> Runtime.getRuntime().halt(status);

  private Fatal() {}

  /** Ends the process when {@code t} is a fault it cannot survive; returns otherwise. */
  public static void haltIfFatal(String where, Throwable t) {
    if (t instanceof VirtualMachineError) {
      try {
        System.err.println("FATAL in " + where + ": " + t + "; ending the process (exit " + EXIT_STATUS + ")");
        log.error("Fatal fault in {}; ending the process with exit status {}", where, EXIT_STATUS, t);
      } catch (Throwable ignored) {
        // Nothing more can be said; end anyway.
      }
      halter.halt(EXIT_STATUS);
    }
  }

  /** How the process is ended; tests replace it to observe the decision without ending the JVM. */
  @FunctionalInterface
  public interface Halter {
    void halt(int status);
  }

  /** For tests only: replaces how the process is ended; returns the previous one. */
  public static Halter setHalterForTests(Halter replacement) {
    Halter previous = halter;
    halter = replacement;
    return previous;
  }
}

package io.partita.testkit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.utils.Exit;

/**
 * Keeps a Kafka broker or controller running inside the test JVM from ending that JVM. Kafka calls
 * {@link Exit#exit} or {@link Exit#halt} on faults a broker process cannot survive (a log directory
 * gone, a dead raft thread). In a test, such a call from a broker's thread, typically while a
 * cluster shuts down, would end the whole surefire fork: its tests passed, yet Maven sees a fork
 * that exited non-zero and fails the build with no more than "Error occurred in starting fork".
 *
 * <p>Installed once per JVM by every in-JVM cluster of this kit. Each call is printed, with the
 * calling thread's stack, to standard error, kept for {@link #calls()}, and then
 * refused with an exception, as Kafka's own test harness does, so the calling thread stops there
 * instead of the JVM.
 */
public final class KafkaExits {
  private static final List<String> CALLS = new CopyOnWriteArrayList<>();
  private static boolean installed;

  private KafkaExits() {}

  /** Replaces Kafka's exit and halt procedures for this JVM (once; later calls do nothing). */
  public static synchronized void install() {
    if (installed) {
      return;
    }
    installed = true;
    Exit.setExitProcedure((status, message) -> refuse("exit", status, message));
    Exit.setHaltProcedure((status, message) -> refuse("halt", status, message));
  }

  /** Every exit or halt Kafka asked for in this JVM so far, as "halt(1): message [thread]". */
  public static List<String> calls() {
    return List.copyOf(CALLS);
  }

  private static void refuse(String kind, int status, String message) {
    String call = kind + "(" + status + "): " + message + " [" + Thread.currentThread().getName() + "]";
    CALLS.add(call);
    IllegalStateException refused = new IllegalStateException("Kafka asked to " + call
        + "; refused inside the test JVM (testkit KafkaExits), the calling thread stops instead");
    refused.printStackTrace(); // standard error: the test's output file, or the fork's log after the tests
    throw refused;
  }
}

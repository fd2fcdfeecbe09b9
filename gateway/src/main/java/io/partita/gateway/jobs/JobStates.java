package io.partita.gateway.jobs;

import io.partita.avro.JobStatus;

/** The states of a batch job and how two reports of one job are merged. */
public final class JobStates {
  public static final String QUEUED = "QUEUED";
  public static final String RUNNING = "RUNNING";
  /** Asked to cancel: no new item is sent; the runner makes it CANCELLED once its items in flight are back. */
  public static final String CANCELLING = "CANCELLING";
  public static final String DONE = "DONE";
  public static final String CANCELLED = "CANCELLED";
  public static final String FAILED = "FAILED";

  private JobStates() {}

  public static boolean isFinal(String state) {
    return DONE.equals(state) || CANCELLED.equals(state) || FAILED.equals(state);
  }

  /** Whether the job is being or has been cancelled. */
  public static boolean isCancelled(String state) {
    return CANCELLING.equals(state) || CANCELLED.equals(state);
  }

  private static int rank(String state) {
    return isFinal(state) ? 2 : CANCELLING.equals(state) ? 1 : 0;
  }

  /**
   * Which of two reports of one job to keep: a final state beats CANCELLING, which beats QUEUED and
   * RUNNING (a progress report racing a cancel must not revive the job); within a rank the later
   * {@code updatedAt} wins, and on a tie the incoming one.
   */
  public static JobStatus merge(JobStatus kept, JobStatus incoming) {
    if (kept == null) {
      return incoming;
    }
    int k = rank(kept.getState());
    int i = rank(incoming.getState());
    if (k != i) {
      return k > i ? kept : incoming;
    }
    return incoming.getUpdatedAt() >= kept.getUpdatedAt() ? incoming : kept;
  }
}

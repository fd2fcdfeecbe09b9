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

  /** The most items a job may have ({@code gateway.jobs.max.items} cannot be set higher). */
  public static final int MAX_TOTAL = 100_000_000;

  /**
   * Why a status read from Kafka cannot be a job any runner could run (a record written by hand or
   * damaged), or null when it can: an unknown state, a blank or overlong id, counts or offsets out
   * of range. Such a status is passed over rather than tried again and again.
   */
  public static String problem(JobStatus s) {
    if (s.getJobId() == null || s.getJobId().isBlank() || s.getJobId().length() > 128) {
      return "jobId blank or over 128 characters";
    }
    String state = s.getState();
    if (!(QUEUED.equals(state) || RUNNING.equals(state) || CANCELLING.equals(state) || isFinal(state))) {
      return "state is not one of QUEUED, RUNNING, CANCELLING, DONE, CANCELLED, FAILED";
    }
    if (s.getTotal() < 0 || s.getTotal() > MAX_TOTAL) {
      return "total " + s.getTotal() + " is not between 0 and " + MAX_TOTAL;
    }
    if (s.getDone() < 0 || s.getFailed() < 0 || s.getDone() > s.getTotal() || s.getFailed() > s.getDone()) {
      return "done " + s.getDone() + " / failed " + s.getFailed() + " do not fit total " + s.getTotal();
    }
    if (s.getChunks() < 0 || s.getChunks() > s.getTotal() || s.getInputOffset() < 0 || s.getResultsOffset() < 0) {
      return "chunks or offsets out of range";
    }
    return null;
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

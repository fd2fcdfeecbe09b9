package io.partita.worker.slot;

import io.partita.common.EpochMicros;

/**
 * When one request passed the worker's stages, in epoch microseconds ({@link EpochMicros}); sent
 * back on the reply as the {@code partita-stages} header so a client can see where its time went.
 * Written by the loop (read, decoded), the slot (run start and end) and the reply (encoded), one
 * after the other: each stage happens-before the next hands the job on.
 */
public final class Stages {
  private volatile long read;
  private volatile long decoded;
  private volatile long runStart;
  private volatile long runEnd;

  /** Starts the stamps when the loop takes the record. */
  public static Stages readNow() {
    Stages s = new Stages();
    s.read = EpochMicros.now();
    return s;
  }

  public void decoded() {
    decoded = EpochMicros.now();
  }

  /**
   * The batch's run, on the slot's thread. A request cut into parts ({@code SplitJob}) runs more than
   * once: its stamps span from the first part's start to the last part's end.
   */
  public synchronized void ran(long startMicros, long endMicros) {
    runStart = runStart == 0 ? startMicros : Math.min(runStart, startMicros);
    runEnd = Math.max(runEnd, endMicros);
  }

  /** The header value, with {@code encoded} stamped now. */
  public String header() {
    StringBuilder b = new StringBuilder(96).append("read=").append(read).append(";decoded=").append(decoded);
    if (runStart > 0) {
      b.append(";run-start=").append(runStart).append(";run-end=").append(runEnd);
    }
    return b.append(";encoded=").append(EpochMicros.now()).toString();
  }
}

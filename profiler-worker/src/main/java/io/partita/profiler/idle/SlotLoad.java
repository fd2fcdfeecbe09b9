package io.partita.profiler.idle;

import io.partita.avro.SlotStatus;

/**
 * What one serving slot's status says about its load (the fields of {@code SlotStatus} the idle
 * check reads).
 *
 * @param slot the slot id on this host
 * @param health STARTING, READY, DEGRADED, FAILED or STOPPED
 * @param inFlight requests in the batch being run
 * @param queueDepth requests waiting for a batch
 * @param answered requests the slot answered since it started (a counter: its growth between two
 *     statuses is the slot's rate)
 * @param timestampMs when the worker wrote the status (epoch ms)
 */
public record SlotLoad(String slot, String health, int inFlight, int queueDepth, long answered, long timestampMs) {

  /** The fields of a worker's slot status the idle check reads. */
  public static SlotLoad of(SlotStatus s) {
    return new SlotLoad(s.getSlot(), s.getHealth(), s.getInFlight(), s.getQueueDepth(), s.getAnswered(), s.getTimestamp());
  }

  /** A slot that has, or is about to have, a session taking requests. */
  public boolean serving() {
    return health.equals("READY") || health.equals("DEGRADED") || health.equals("STARTING");
  }
}

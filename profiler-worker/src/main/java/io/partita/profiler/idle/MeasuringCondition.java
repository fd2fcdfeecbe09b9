package io.partita.profiler.idle;

/**
 * What the host's serving slots were doing when a measurement started; published as
 * {@code TimingEvent.condition}, so whoever reads a timing knows whether serving traffic shared
 * the cores with it.
 */
public enum MeasuringCondition {
  /** Not looked at: a record written before the field existed, {@code partita profile}, the check turned off, or the slot statuses could not be read. The schema's default. */
  UNCHECKED,
  /** No live serving slot on the host (a spare host, or the workers are stopped). */
  NO_SERVING,
  /** Serving slots exist and were idle enough (see {@link IdleSettings}). */
  IDLE,
  /** Serving slots were still busier than the thresholds when the allowed wait ran out. */
  BUSY_AFTER_WAIT
}

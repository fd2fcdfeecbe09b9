package io.partita.planning.grouping;

/** What a grouping's figure rests on when groupings are compared. */
public enum ChoiceBasis {
  /** A grouping-mode measurement of exactly this grouping, batch and provider. */
  MEASURED,
  /** The sum of single-size points, times the pool's interference factor for its partition count. */
  PREDICTED
}

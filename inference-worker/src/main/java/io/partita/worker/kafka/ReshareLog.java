package io.partita.worker.kafka;

/**
 * Whether the worker's request to share the request partitions out again gets an INFO line. In a
 * worker's first minute its offered capacity moves every few seconds (slots open, warm up, the plan
 * is re-planned as measurements arrive), and each move asks the group for a round: one INFO line
 * each flooded the log. So a re-share is logged at INFO only when this worker's share moves by more
 * than the planner's hysteresis margin (the planner does not act on smaller moves either), and at
 * most once a minute; every other one at DEBUG, counted in the next INFO line. Pure: the caller
 * passes the time. Used from the request loop's thread alone.
 */
final class ReshareLog {
  /** The planner's default hysteresis ({@code planner.hysteresis}): a smaller move of the share is noise. */
  static final double MARGIN = 0.10;
  /** The least time between two INFO lines. */
  static final long INFO_GAP_MS = 60_000;

  /** What to log for one re-share: INFO or DEBUG, and how many went to DEBUG since the last INFO line. */
  record Notice(boolean info, int quietBefore) {}

  private boolean logged;
  private long lastInfo;
  private int quiet;

  /**
   * @param nowMs the time of this re-share
   * @param move how far this worker's share moves, relative, from 0 to 1 ({@code TopicCapacity#move})
   */
  Notice next(long nowMs, double move) {
    if (move > MARGIN && (!logged || nowMs - lastInfo >= INFO_GAP_MS)) {
      Notice notice = new Notice(true, quiet);
      logged = true;
      lastInfo = nowMs;
      quiet = 0;
      return notice;
    }
    quiet++;
    return new Notice(false, quiet);
  }
}

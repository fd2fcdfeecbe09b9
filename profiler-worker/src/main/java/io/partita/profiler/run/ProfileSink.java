package io.partita.profiler.run;

import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;

/** Receives what a {@link ProfileRunner} measures, as it is measured. */
public interface ProfileSink {

  /** A step (a point, or a grouping at one batch size) is starting: {@code done} of {@code total} are finished. */
  void starting(int done, int total, String label);

  /** One single point was measured (or failed). */
  void point(TimingResult result, int done, int total);

  /** One grouping at one batch size and provider was measured (or failed). */
  void grouping(GroupingResult result, int done, int total);
}

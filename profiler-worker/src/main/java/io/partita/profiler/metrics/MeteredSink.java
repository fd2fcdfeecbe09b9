package io.partita.profiler.metrics;

import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileSink;

/** Times each step from its start to its result ({@link ProfilerMetrics#STEP}), then passes every call on. */
public final class MeteredSink implements ProfileSink {
  private final ProfilerMetrics metrics;
  private final ProfileSink next;
  private long started;

  public MeteredSink(ProfilerMetrics metrics, ProfileSink next) {
    this.metrics = metrics;
    this.next = next;
  }

  @Override
  public void starting(int done, int total, String label) {
    started = System.nanoTime();
    next.starting(done, total, label);
  }

  @Override
  public void point(TimingResult result, int done, int total) {
    metrics.step("point", result.ok(), System.nanoTime() - started);
    next.point(result, done, total);
  }

  @Override
  public void grouping(GroupingResult result, int done, int total) {
    metrics.step("grouping", result.ok(), System.nanoTime() - started);
    next.grouping(result, done, total);
  }
}

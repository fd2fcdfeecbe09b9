package io.partita.profiler.run;

import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import java.util.List;

/**
 * What a profile run gave. {@code error} is set when nothing could be measured at all (an unknown
 * model or version): then the lists are empty. Failed points are results, not errors.
 *
 * @param versions the versions measured, in repository order
 */
public record ProfileOutcome(
    String requestId, String model, List<String> versions, List<TimingResult> points, List<GroupingResult> groupings,
    String error) {

  public ProfileOutcome {
    versions = List.copyOf(versions);
    points = List.copyOf(points);
    groupings = List.copyOf(groupings);
  }

  static ProfileOutcome failed(ProfileSpec spec, String error) {
    return new ProfileOutcome(spec.requestId(), spec.model(), List.of(), List.of(), List.of(), error);
  }

  /** Steps measured, failed ones included. */
  public int steps() {
    return points.size() + groupings.size();
  }

  public int failedSteps() {
    return (int) (points.stream().filter(p -> !p.ok()).count() + groupings.stream().filter(g -> !g.ok()).count());
  }

  /** True when the run could start and every step was measured. */
  public boolean ok() {
    return error == null && failedSteps() == 0;
  }
}

package io.partita.planner.plan;

import io.partita.avro.TimingEvent;
import io.partita.planning.grouping.GroupingMeasurement;
import io.partita.planning.grouping.Interference;
import io.partita.planning.grouping.InterferenceSample;
import io.partita.planning.grouping.MeasurementSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the grouping-mode measurements in the input tables say, for {@link
 * io.partita.planning.grouping.MeasuredGroupings}: the measured groupings of one model version, batch and
 * provider on one pool, by who measured them (the profiler's idle figures and those from serving,
 * {@link ServedGroupings}, are kept apart: {@link Keys#groupingRecord}), and the interference
 * factor of a host's pool learnt from every model the profiler measured there. A figure from
 * serving is not a sample of interference: it holds serving's own costs as well, which the pool's
 * serving factor ({@code ServingFactor}) accounts for instead. Pure.
 */
public final class GroupingEvidence {
  private GroupingEvidence() {}

  /**
   * The grouping-mode measurements of one model version on one pool at one batch and provider made
   * by {@code source}, by sizes (descending).
   */
  public static Map<List<Integer>, GroupingMeasurement> measured(PlanInputs in, String model, String version,
      String host, String pool, int batch, String provider, MeasurementSource source) {
    String prefix = prefix(model, version, host, pool, batch, provider);
    Map<List<Integer>, GroupingMeasurement> out = new HashMap<>();
    for (TimingEvent e : in.groupings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      if (source(e) == source) {
        GroupingMeasurement m = new GroupingMeasurement(e.getGrouping(), e.getThroughput(), e.getP50Ms(), source);
        out.put(m.sizes(), m);
      }
    }
    return out;
  }

  /**
   * The sizes of the grouping of one model version on one pool at one batch and provider measured
   * from serving most recently (the latest timestamp; ties by sizes), or null when none was.
   */
  public static List<Integer> lastServed(PlanInputs in, String model, String version, String host, String pool,
      int batch, String provider) {
    String prefix = prefix(model, version, host, pool, batch, provider);
    TimingEvent last = null;
    for (TimingEvent e : in.groupings().subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      if (source(e) == MeasurementSource.SERVING && e.getThroughput() > 0
          && (last == null || e.getTimestamp() > last.getTimestamp())) {
        last = e;
      }
    }
    return last == null ? null : last.getGrouping();
  }

  /** The key prefix of one model version's grouping records on one pool at one batch and provider. */
  private static String prefix(String model, String version, String host, String pool, int batch, String provider) {
    return Keys.partition(model, version, host, pool) + Keys.SEP + batch + Keys.SEP + provider + Keys.SEP;
  }

  static MeasurementSource source(TimingEvent e) {
    return ServedGroupings.SERVING.equals(e.getCondition()) ? MeasurementSource.SERVING : MeasurementSource.PROFILER;
  }

  /**
   * One sample per grouping-mode measurement of the profiler on the host's pool (any model) whose every size has a
   * single-size point of the same model version, batch and provider: measured throughput against
   * {@code sum_i b * 1000 / T(k_i)}.
   */
  public static List<InterferenceSample> samples(PlanInputs in, String host, String pool) {
    List<InterferenceSample> out = new ArrayList<>();
    for (TimingEvent e : in.groupingsOn(host, pool).values()) {
      if (!(e.getThroughput() > 0) || source(e) != MeasurementSource.PROFILER) {
        continue;
      }
      Double predicted = predicted(in, e);
      if (predicted != null) {
        out.add(new InterferenceSample(e.getGrouping().size(), e.getThroughput(), predicted));
      }
    }
    return out;
  }

  public static Interference interference(PlanInputs in, String host, String pool) {
    return Interference.of(samples(in, host, pool));
  }

  /** The single-point prediction of a measured grouping, or null when a size has no point. */
  static Double predicted(PlanInputs in, TimingEvent grouping) {
    double sum = 0;
    for (int k : grouping.getGrouping()) {
      TimingEvent point = in.timings().get(Keys.timing(grouping.getModel(), grouping.getVersion(), grouping.getHost(),
          grouping.getPool(), k, grouping.getBatch(), grouping.getProvider()));
      if (point == null || !(point.getP50Ms() > 0)) {
        return null;
      }
      sum += grouping.getBatch() * 1000.0 / Plans.batchTimeMs(point, in.hosts().get(grouping.getHost()));
    }
    return sum;
  }
}

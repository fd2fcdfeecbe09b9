package io.partita.planning.grouping;

/**
 * What a grouping optimises.
 *
 * <ul>
 *   <li>{@link #THROUGHPUT}: highest {@code sum_i b / T(k_i)}.
 *   <li>{@link #LATENCY}: lowest {@code max_i T(k_i)}, for services that care about one request's
 *       latency more than about throughput; ties then go as for throughput.
 * </ul>
 */
public enum GroupingObjective {
  THROUGHPUT,
  LATENCY
}

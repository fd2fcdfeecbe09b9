package io.partita.planner.plan;

import io.partita.avro.TimingEvent;
import java.util.ArrayList;
import java.util.List;

/** The record keys of the input and plan tables, built in one place. */
public final class Keys {
  public static final String SEP = "/";
  private static final String SERVED = "serving";

  private Keys() {}

  public static String modelVersion(String model, String version) {
    return model + SEP + version;
  }

  public static String modelHost(String model, String host) {
    return model + SEP + host;
  }

  public static String hostSlot(String host, String slot) {
    return host + SEP + slot;
  }

  /** model/version/host/pool: one partition plan. */
  public static String partition(String model, String version, String host, String pool) {
    return model + SEP + version + SEP + host + SEP + pool;
  }

  /** model/version/host/pool/size/batch/provider: one cell of the timing matrix. */
  public static String timing(TimingEvent e) {
    return timing(e.getModel(), e.getVersion(), e.getHost(), e.getPool(), e.getSize(), e.getBatch(), e.getProvider());
  }

  public static String timing(String model, String version, String host, String pool, int size, int batch,
      String provider) {
    return partition(model, version, host, pool) + SEP + size + SEP + batch + SEP + provider;
  }

  /** host/pool: what the planner asks the profiler of one pool about. */
  public static String hostPool(String host, String pool) {
    return host + SEP + pool;
  }

  /** model/version/host/pool/batch/provider/sizes: one grouping measured in grouping mode. */
  public static String grouping(TimingEvent e) {
    return grouping(e.getModel(), e.getVersion(), e.getHost(), e.getPool(), e.getBatch(), e.getProvider(),
        e.getGrouping());
  }

  /**
   * Where a grouping-mode measurement is kept in the groupings store: the profiler's under {@link
   * #grouping(TimingEvent)}, one from serving ({@code condition = SERVING}) beside it under that
   * key plus {@code /serving}, so that a grouping keeps its idle figure and its serving figure both
   * (their ratio is what serving costs on the pool, planner-core's {@code ServingFactor}).
   */
  public static String groupingRecord(TimingEvent e) {
    return ServedGroupings.SERVING.equals(e.getCondition()) ? served(grouping(e)) : grouping(e);
  }

  /** The key of the serving figure of the grouping whose profiler key is {@code groupingKey}. */
  public static String served(String groupingKey) {
    return groupingKey + SEP + SERVED;
  }

  public static String grouping(String model, String version, String host, String pool, int batch,
      String provider, List<Integer> sizes) {
    List<Integer> sorted = new ArrayList<>(sizes);
    sorted.sort((a, b) -> Integer.compare(b, a));
    StringBuilder s = new StringBuilder(partition(model, version, host, pool)).append(SEP).append(batch)
        .append(SEP).append(provider).append(SEP);
    for (int i = 0; i < sorted.size(); i++) {
      s.append(i == 0 ? "" : ",").append(sorted.get(i));
    }
    return s.toString();
  }
}

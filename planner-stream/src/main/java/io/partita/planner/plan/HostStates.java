package io.partita.planner.plan;

import io.partita.avro.HostEnvironment;
import io.partita.avro.HostLiveness;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Which hosts are planned: every host with an environment, except one whose last liveness record
 * says its worker {@link #LEFT} the request consumer group (stopped, or killed, frozen or cut off
 * past the group's session timeout). Its plans are withdrawn, so its instances move to the other
 * hosts; when its worker is back ({@link #PRESENT}) it is planned again. A host with no liveness
 * record is planned as before the watcher existed (a planner run without workers, a replay of
 * history without that topic). Pure.
 */
public final class HostStates {
  public static final String PRESENT = "PRESENT";
  public static final String LEFT = "LEFT";
  public static final List<String> KNOWN = List.of(PRESENT, LEFT);

  private HostStates() {}

  /** The environments of the hosts to plan. */
  public static SortedMap<String, HostEnvironment> planned(Map<String, HostEnvironment> hosts,
      Map<String, HostLiveness> liveness) {
    SortedMap<String, HostEnvironment> out = new TreeMap<>();
    hosts.forEach((host, env) -> {
      if (planned(liveness.get(host))) {
        out.put(host, env);
      }
    });
    return out;
  }

  /** Whether a host with this last liveness record (null: none) is planned. */
  public static boolean planned(HostLiveness liveness) {
    return liveness == null || !LEFT.equals(liveness.getState());
  }
}

package io.partita.planner.plan;

import io.partita.planning.version.HostFacts;
import io.partita.planning.version.HostSimilarity;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The other planned hosts in similarity order to one host ({@link HostSimilarity#ordered}), most
 * similar first: {@code hosts} their keys, {@code facts} theirs, {@code places} key -> index. The
 * two predictions from similar hosts, a partition profile ({@link PredictedProfiles}) and a
 * version's latency ({@link VersionPlans#reducedProblem}), both look for the most similar host that
 * has something and walk this order to the first one that has it; it is made once per host per
 * pass and kept in the pass cache ({@link PredictedProfiles.PassCache}), since it depends on the
 * hosts only, not on the model. A caller that needs more than being planned (a baseline score)
 * skips the others as it walks: the order of a subset is the subset of the order.
 */
record SimilarHosts(List<String> hosts, List<HostFacts> facts, Map<String, Integer> places) {

  /** The order for {@code host} in this pass (made on first use); null when the host is not planned. */
  static SimilarHosts of(PlanInputs in, String host) {
    HostFacts target = in.factsOf(host);
    if (target == null) {
      return null;
    }
    return in.predictions().candidates(host, () -> make(in, host, target));
  }

  private static SimilarHosts make(PlanInputs in, String host, HostFacts target) {
    Map<String, String> keyOf = new HashMap<>();
    List<HostFacts> all = new ArrayList<>();
    for (String other : in.hosts().keySet()) {
      if (!other.equals(host)) {
        HostFacts facts = in.factsOf(other);
        keyOf.put(facts.hostId(), other);
        all.add(facts);
      }
    }
    List<HostFacts> ordered = HostSimilarity.ordered(target, all);
    List<String> hosts = new ArrayList<>(ordered.size());
    Map<String, Integer> places = new HashMap<>();
    for (HostFacts facts : ordered) {
      String key = keyOf.get(facts.hostId());
      places.put(key, hosts.size());
      hosts.add(key);
    }
    return new SimilarHosts(hosts, ordered, places);
  }

  /**
   * The places to look at, in order, for the most similar host among {@code having} (the hosts
   * that have what the caller looks for, planned or not): every place when many hosts have it (a
   * walk from the top stops early), or, when few do ({@code m^2 < H}), only theirs, sorted, so the
   * walk does not pass the many that do not.
   */
  int[] walk(Set<String> having) {
    if ((long) having.size() * having.size() >= hosts.size()) {
      int[] all = new int[hosts.size()];
      Arrays.setAll(all, i -> i);
      return all;
    }
    int[] out = new int[having.size()];
    int n = 0;
    for (String h : having) {
      Integer place = places.get(h);
      if (place != null) {
        out[n++] = place;
      }
    }
    int[] some = Arrays.copyOf(out, n);
    Arrays.sort(some);
    return some;
  }
}

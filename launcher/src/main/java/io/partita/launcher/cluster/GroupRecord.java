package io.partita.launcher.cluster;

import java.util.List;
import java.util.Map;

/**
 * One process group of a cluster as the state file keeps it: where it lives (namespace, address,
 * the bridge side of its veth pair, its cgroups) and what it was given (cpuset, base quota, ports).
 *
 * @param name e.g. {@code host-1}
 * @param slot last byte of its address in the cluster's /24
 * @param address its address ({@code 198.18.x.slot}, or {@code 127.0.0.1} on loopback)
 * @param namespace its network namespace; null on loopback
 * @param hostVeth the bridge side of its veth pair (down = cut off); null on loopback
 * @param cgroup its cgroup path below each controller ({@code pt3fa9c1/host-1}); null on loopback
 * @param cpus its cpuset
 * @param quota its base CPU quota in cores; 0 = none (the infrastructure)
 * @param ports named ports its processes listen on ({@code client}, {@code controller}, {@code http}, {@code grpc})
 */
public record GroupRecord(String name, GroupKind kind, int index, int slot, String address, String namespace,
    String hostVeth, String cgroup, List<Integer> cpus, double quota, Map<String, Integer> ports) {

  public GroupRecord {
    cpus = List.copyOf(cpus);
    ports = Map.copyOf(ports);
  }

  public int port(String name) {
    Integer p = ports.get(name);
    if (p == null) {
      throw new IllegalStateException(this.name + " has no " + name + " port");
    }
    return p;
  }
}

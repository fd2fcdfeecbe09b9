package io.partita.launcher.cluster;

import java.util.List;
import java.util.Map;

/**
 * One process of a cluster as the state file keeps it: enough for {@code status}, {@code fault}
 * and {@code down} to find it from a new JVM, and for {@code fault start} to start it again.
 *
 * @param name e.g. {@code host-1-worker}, {@code broker-2}
 * @param group its process group ({@code host-1})
 * @param hostId the {@code host.id} it runs with (worker hosts), else null
 * @param pid its process id once started; 0 before
 * @param ports the ports it listens on, by name (its group's)
 * @param argv the java command line (without the namespace and cgroup wrapper)
 * @param log where its standard output and error go
 */
public record ProcessRecord(String name, Role role, String group, String hostId, long pid, String namespace,
    String cgroup, String address, Map<String, Integer> ports, List<String> argv, String log) {

  public ProcessRecord {
    ports = Map.copyOf(ports);
    argv = List.copyOf(argv);
  }

  public ProcessRecord withPid(long newPid) {
    return new ProcessRecord(name, role, group, hostId, newPid, namespace, cgroup, address, ports, argv, log);
  }
}

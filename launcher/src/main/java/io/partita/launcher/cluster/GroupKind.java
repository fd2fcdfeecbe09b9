package io.partita.launcher.cluster;

import java.util.List;
import java.util.Locale;

/**
 * A process group: what shares one network namespace, one address and one set of cgroups, and is
 * the target of a fault. A broker, a planner and a gateway are groups of one process; a worker host
 * ({@code host-N}) runs the worker and the profiler side by side, as one machine would.
 */
public enum GroupKind {
  BROKER("broker", 10, 9, List.of(Role.BROKER)),
  PLANNER("planner", 20, 9, List.of(Role.PLANNER)),
  GATEWAY("gateway", 30, 9, List.of(Role.GATEWAY)),
  HOST("host", 100, 150, List.of(Role.WORKER, Role.PROFILER));

  private final String prefix;
  private final int firstSlot;
  private final int max;
  private final List<Role> roles;

  GroupKind(String prefix, int firstSlot, int max, List<Role> roles) {
    this.prefix = prefix;
    this.firstSlot = firstSlot;
    this.max = max;
    this.roles = roles;
  }

  /** The group's name, e.g. {@code broker-2}, {@code host-1}. */
  public String groupName(int index) {
    return prefix + "-" + index;
  }

  /**
   * The last byte of the group's address in the cluster's /24, fixed by kind and index (broker-2 is
   * always .12, host-1 .101), so addresses are predictable and a restarted group keeps its own.
   */
  public int slot(int index) {
    if (index < 1 || index > max) {
      throw new IllegalArgumentException(prefix + " index " + index + " is out of range 1.." + max);
    }
    return firstSlot + index;
  }

  /** Most groups of this kind one cluster can have (addresses are kept apart per kind). */
  public int max() {
    return max;
  }

  public List<Role> roles() {
    return roles;
  }

  /** Infrastructure (brokers, planners, gateways) shares the infrastructure CPUs; hosts get quotas. */
  public boolean infrastructure() {
    return this != HOST;
  }

  /** The kind and index of a group name ({@code host-3}), or an error naming the known forms. */
  public static Target parse(String group) {
    int dash = group.lastIndexOf('-');
    if (dash > 0) {
      String prefix = group.substring(0, dash);
      for (GroupKind kind : values()) {
        if (kind.prefix.equals(prefix)) {
          try {
            int index = Integer.parseInt(group.substring(dash + 1));
            kind.slot(index);
            return new Target(kind, index);
          } catch (NumberFormatException e) {
            break;
          }
        }
      }
    }
    throw new IllegalArgumentException("'" + group + "' is not a target: expected host-N, broker-N, planner-N or gateway-N");
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** A parsed group name. */
  public record Target(GroupKind kind, int index) {
    public String name() {
      return kind.groupName(index);
    }
  }
}

package io.partita.launcher.cluster;

import java.util.Locale;

/** What a process of a cluster runs ({@code partita <command>}), and the heap it is given. */
public enum Role {
  BROKER("broker", "512m", true),
  PLANNER("planner", "384m", false),
  GATEWAY("gateway", "384m", false),
  WORKER("worker", "512m", false),
  PROFILER("profiler", "384m", false);

  private final String command;
  private final String maxHeap;
  private final boolean optimizing;

  Role(String command, String maxHeap, boolean optimizing) {
    this.command = command;
    this.maxHeap = maxHeap;
    this.optimizing = optimizing;
  }

  /**
   * Whether the role's JVM runs the optimizing compiler (C2) as well as C1. The brokers do: every
   * call of every host passes through them three times over (replication factor 3), all on the
   * infrastructure's CPUs, and C1-only code made them what bounds a cluster on two cores (1.6 ms
   * of broker CPU per demo call; 1.0 ms with C2). The other roles stop at C1, which starts them
   * sooner on shared cores and within a host's quota.
   */
  public boolean optimizing() {
    return optimizing;
  }

  /** The launcher command that runs it. */
  public String command() {
    return command;
  }

  public String maxHeap() {
    return maxHeap;
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Role of(String name) {
    return valueOf(name.toUpperCase(Locale.ROOT));
  }
}

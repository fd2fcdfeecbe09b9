package io.partita.launcher.cluster;

import java.util.Locale;

/** What a process of a cluster runs ({@code partita <command>}), and the heap it is given. */
public enum Role {
  BROKER("broker", "512m"),
  PLANNER("planner", "384m"),
  GATEWAY("gateway", "384m"),
  WORKER("worker", "512m"),
  PROFILER("profiler", "384m");

  private final String command;
  private final String maxHeap;

  Role(String command, String maxHeap) {
    this.command = command;
    this.maxHeap = maxHeap;
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

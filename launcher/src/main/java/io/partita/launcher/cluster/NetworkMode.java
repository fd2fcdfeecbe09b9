package io.partita.launcher.cluster;

import java.util.Locale;

/**
 * How the processes of a cluster reach each other. {@code NETNS}: each process group in its own
 * network namespace on a bridge, with its own cgroups (needs root on Linux). {@code LOOPBACK}:
 * every process on this host's loopback, pinned with {@code taskset}, no CPU quota, so worker hosts
 * do not differ in speed and {@code partition}/{@code slow} are unavailable. {@code AUTO} picks
 * {@code NETNS} when it can.
 */
public enum NetworkMode {
  AUTO, NETNS, LOOPBACK;

  /** For picocli: {@code --network auto|netns|loopback}. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}

package io.partita.launcher.cluster;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The cgroup v1 groups of a cluster: one per process group under each of {@code cpu} (its quota,
 * {@code cpu.cfs_quota_us} over {@code cpu.cfs_period_us}, see {@link Quota}), {@code cpuset} (its CPUs) and
 * {@code freezer} (pause and resume), at {@code /sys/fs/cgroup/<controller>/<cluster id>/<group>}.
 * A process joins all three before it execs java, so none of its threads escapes.
 */
final class Cgroups {
  static final Path ROOT = Path.of("/sys/fs/cgroup");
  static final List<String> CONTROLLERS = List.of("cpu", "cpuset", "freezer");

  private Cgroups() {}

  /** Whether the three v1 controllers are mounted and writable here. */
  static boolean available() {
    for (String c : CONTROLLERS) {
      Path dir = ROOT.resolve(c);
      if (!Files.isDirectory(dir) || !Files.isWritable(dir) || !Files.exists(dir.resolve("cgroup.procs"))) {
        return false;
      }
    }
    return Files.exists(ROOT.resolve("cpu").resolve("cpu.cfs_quota_us")) && Files.exists(ROOT.resolve("cpuset").resolve("cpuset.cpus"));
  }

  /** The files a process writes its pid to, one per controller. */
  static List<Path> procsFiles(String path) {
    return CONTROLLERS.stream().map(c -> ROOT.resolve(c).resolve(path).resolve("cgroup.procs")).toList();
  }

  /**
   * Makes {@code path} ({@code <id>/<group>}) under every controller, with its cpuset and quota
   * (0 = none). The cluster's own level inherits every CPU and memory node of the root.
   */
  static void create(String path, List<Integer> cpus, double quota) throws IOException {
    Path cluster = ROOT.resolve("cpuset").resolve(path).getParent();
    for (String c : CONTROLLERS) {
      Files.createDirectories(ROOT.resolve(c).resolve(path));
    }
    // A cpuset with no CPUs or memory nodes refuses tasks: fill the levels top-down.
    Path root = ROOT.resolve("cpuset");
    write(cluster.resolve("cpuset.cpus"), read(root.resolve("cpuset.cpus")));
    write(cluster.resolve("cpuset.mems"), read(root.resolve("cpuset.mems")));
    Path group = root.resolve(path);
    write(group.resolve("cpuset.cpus"), CpuLayout.cpuset(cpus));
    write(group.resolve("cpuset.mems"), read(root.resolve("cpuset.mems")));
    setQuota(path, quota);
  }

  /** Sets the CPU quota in cores (and the period it is enforced over, {@link Quota#periodMicros}); 0 = none. */
  static void setQuota(String path, double quota) throws IOException {
    Path dir = ROOT.resolve("cpu").resolve(path);
    // No quota first: the kernel checks each write against the other value, so a period written
    // under the old quota could be refused.
    write(dir.resolve("cpu.cfs_quota_us"), "-1");
    if (quota > 0) {
      write(dir.resolve("cpu.cfs_period_us"), Long.toString(Quota.periodMicros(quota)));
      write(dir.resolve("cpu.cfs_quota_us"), Long.toString(Quota.quotaMicros(quota)));
    }
  }

  /** The CPU quota in cores; 0 = none. */
  static double quota(String path) throws IOException {
    Path dir = ROOT.resolve("cpu").resolve(path);
    return Quota.cores(Long.parseLong(read(dir.resolve("cpu.cfs_quota_us"))), Long.parseLong(read(dir.resolve("cpu.cfs_period_us"))));
  }

  static List<Integer> cpus(String path) throws IOException {
    return CpuLayout.parseCpuset(read(ROOT.resolve("cpuset").resolve(path).resolve("cpuset.cpus")));
  }

  /** Freezes or thaws every process of the group, and waits (up to 10 s) until the kernel says it is done. */
  static void freeze(String path, boolean frozen) throws IOException, InterruptedException {
    Path state = ROOT.resolve("freezer").resolve(path).resolve("freezer.state");
    String want = frozen ? "FROZEN" : "THAWED";
    write(state, want);
    long until = System.nanoTime() + 10_000_000_000L;
    while (!read(state).equals(want)) {
      if (System.nanoTime() > until) {
        throw new IllegalStateException(state + " is still " + read(state) + " 10 s after writing " + want);
      }
      write(state, want);
      Thread.sleep(20); // the freezer gives no notification of its state: polled, and asked again
    }
  }

  static boolean frozen(String path) {
    try {
      return !read(ROOT.resolve("freezer").resolve(path).resolve("freezer.state")).equals("THAWED");
    } catch (IOException e) {
      return false;
    }
  }

  static boolean exists(String path) {
    return CONTROLLERS.stream().anyMatch(c -> Files.isDirectory(ROOT.resolve(c).resolve(path)));
  }

  /** Every process in the group, under any controller. */
  static Set<Long> pids(String path) {
    Set<Long> out = new LinkedHashSet<>();
    for (String c : CONTROLLERS) {
      Path procs = ROOT.resolve(c).resolve(path).resolve("cgroup.procs");
      try {
        for (String line : Files.readAllLines(procs)) {
          if (!line.isBlank()) {
            out.add(Long.parseLong(line.strip()));
          }
        }
      } catch (IOException e) {
        // not there under this controller
      }
    }
    return out;
  }

  /** The groups under the cluster's level ({@code <id>/host-1}, ...), under any controller. */
  static List<String> groups(String clusterId) {
    Set<String> out = new LinkedHashSet<>();
    for (String c : CONTROLLERS) {
      Path dir = ROOT.resolve(c).resolve(clusterId);
      if (Files.isDirectory(dir)) {
        try (DirectoryStream<Path> children = Files.newDirectoryStream(dir, Files::isDirectory)) {
          children.forEach(p -> out.add(clusterId + "/" + p.getFileName()));
        } catch (IOException e) {
          // gone meanwhile
        }
      }
    }
    return new ArrayList<>(out);
  }

  /** Moves a process (all its threads) into {@code path} under every controller. */
  static void join(String path, long pid) throws IOException {
    for (Path procs : procsFiles(path)) {
      write(procs, Long.toString(pid));
    }
  }

  /** Moves a process back to the root group under every controller. */
  static void leave(long pid) throws IOException {
    for (String c : CONTROLLERS) {
      write(ROOT.resolve(c).resolve("cgroup.procs"), Long.toString(pid));
    }
  }

  /** Removes the group (it must have no process left) under every controller; true if none is left. */
  static boolean remove(String path) {
    boolean gone = true;
    for (String c : CONTROLLERS) {
      Path dir = ROOT.resolve(c).resolve(path);
      try {
        Files.deleteIfExists(dir); // rmdir: a cgroup's files are not real files and need no deleting
      } catch (IOException e) {
        gone = false;
      }
    }
    return gone;
  }

  private static String read(Path file) throws IOException {
    return Files.readString(file).strip();
  }

  private static void write(Path file, String value) throws IOException {
    Files.writeString(file, value);
  }
}

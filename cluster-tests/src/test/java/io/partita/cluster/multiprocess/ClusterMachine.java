package io.partita.cluster.multiprocess;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.launcher.cluster.Cluster;
import io.partita.launcher.cluster.ClusterNames;
import io.partita.launcher.cluster.ClusterSpec;
import io.partita.launcher.cluster.NetworkMode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * What the cluster tests need of this machine and how they look at it from outside the code under
 * test: root with network namespaces and cgroup v1 (CI runs as root; elsewhere the tests skip,
 * saying why), a spec for a cluster under {@code target/}, and the system's own view of what is
 * left with a cluster's name ({@code ip}, {@code /sys/fs/cgroup}, {@code /proc}).
 */
final class ClusterMachine {
  static final Path CGROUPS = Path.of("/sys/fs/cgroup");

  private ClusterMachine() {}

  /** Skips the calling test unless this is root on Linux with `ip netns` and cgroup v1 cpu, cpuset and freezer. */
  static void assumeNamespacesAndCgroups() {
    Assumptions.assumeTrue(System.getProperty("os.name", "").toLowerCase().contains("linux"), "not Linux: no cluster of namespaces");
    Assumptions.assumeTrue("0".equals(run("id", "-u").strip()),
        "not root: `partita cluster` needs root for network namespaces and cgroups (CI runs as root)");
    Assumptions.assumeTrue(!run("ip", "netns", "list").startsWith("failed"), "`ip netns` is not available");
    for (String controller : List.of("cpu", "cpuset", "freezer")) {
      Assumptions.assumeTrue(Files.isWritable(CGROUPS.resolve(controller)), "cgroup v1 " + controller + " is not mounted writable");
    }
    Assumptions.assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "fewer than 2 CPUs: worker hosts would share the infrastructure's");
  }

  /** The test JVM's class path, which holds the launcher and everything it needs. */
  static String classPath() {
    return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
  }

  static ClusterSpec spec(Path dir, int brokers, String workerCpus, int gateways, List<String> javaOptions) {
    return ClusterSpec.of(dir, brokers, null, workerCpus, gateways, null, NetworkMode.NETNS, Duration.ofSeconds(480), null,
        javaOptions, classPath());
  }

  /**
   * A fresh directory for a cluster, under target/ so that its logs stay after the run: a cluster
   * an aborted run left there is taken down first, and what it wrote (models added by a test,
   * broker data, logs) is removed, so a run on a used checkout starts as one on a clean clone.
   */
  static Path freshDir(String name) throws IOException {
    Path dir = Path.of("target", "clusters", name).toAbsolutePath();
    if (Files.isDirectory(dir)) {
      down(dir);
      deleteRecursively(dir);
    }
    Files.createDirectories(dir);
    return dir;
  }

  /** Deletes a file or a directory with everything under it; nothing when it does not exist. */
  static void deleteRecursively(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> all = Files.walk(path)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  /** Everything on this machine with the cluster's name on it, seen by the system's own tools. */
  static List<String> leftovers(ClusterNames names) {
    List<String> out = new ArrayList<>();
    for (String line : run("ip", "netns", "list").lines().toList()) {
      if (line.startsWith(names.id())) {
        out.add("namespace " + line);
      }
    }
    for (String line : run("ip", "-o", "link", "show").lines().toList()) {
      if (line.contains(" " + names.id())) {
        out.add("link " + line.split(":\\s+")[1]);
      }
    }
    for (String controller : List.of("cpu", "cpuset", "freezer")) {
      if (Files.exists(CGROUPS.resolve(controller).resolve(names.id()))) {
        out.add("cgroup " + controller + "/" + names.id());
      }
    }
    ProcessHandle.allProcesses().filter(p -> p.info().arguments().map(a -> List.of(a).contains(names.mark())).orElse(false))
        .forEach(p -> out.add("process " + p.pid()));
    return out;
  }

  /**
   * Whether {@code pid} is a running process: not gone and not a zombie. A process whose parent
   * died is reparented, and where nothing reaps it stays a zombie, which {@link ProcessHandle#isAlive}
   * still counts.
   */
  static boolean running(long pid) {
    String stat = read(Path.of("/proc", Long.toString(pid), "stat"));
    int close = stat.lastIndexOf(')');
    return !stat.startsWith("(unreadable") && close > 0 && stat.length() > close + 2 && stat.charAt(close + 2) != 'Z';
  }

  static String read(Path file) {
    try {
      return Files.readString(file).strip();
    } catch (IOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }

  static String run(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      return p.exitValue() == 0 ? out : "failed (" + p.exitValue() + "): " + out;
    } catch (IOException e) {
      return "failed: " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "failed: interrupted";
    }
  }

  /** Brings the cluster down, for a finally block: a failed test never leaves a cluster behind. */
  static void down(Path dir) {
    Cluster.down(dir, System.err);
  }
}

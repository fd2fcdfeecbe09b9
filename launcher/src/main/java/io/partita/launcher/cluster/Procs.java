package io.partita.launcher.cluster;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Starting, finding and signalling a cluster's processes. A process is started in a new session
 * ({@code setsid}: it outlives {@code up} and a Ctrl-C at the terminal), its output appended to its
 * log. In a namespace, a shell joins the group's cgroups and then execs {@code nsenter --net=... (the network namespace only)
 * java}, so the recorded pid is the java process and all its threads start inside the cgroups. A
 * process is ours only while its command line carries the cluster's mark, so a recycled pid is
 * never signalled.
 */
final class Procs {
  private Procs() {}

  /** Starts {@code process} of {@code group}; returns its pid. */
  static long start(ProcessRecord process, GroupRecord group, Map<String, String> env) throws IOException {
    List<String> command = new ArrayList<>(List.of("setsid"));
    if (group.namespace() != null) {
      String join = Cgroups.procsFiles(group.cgroup()).stream().map(f -> "echo $$ > " + f).collect(Collectors.joining(" && "));
      // nsenter joins the network namespace only. `ip netns exec` would also give the process a mount
      // namespace with a fresh /sys for that network, in which /sys/fs/cgroup is empty: the profiler
      // would see no CPU quota (and publish the host as a whole core), nor would the JVM.
      command.addAll(List.of("sh", "-c", join + " && exec nsenter --net=/var/run/netns/" + group.namespace() + " \"$@\"", "sh"));
    } else if (Shell.has("taskset")) {
      command.addAll(List.of("taskset", "-c", CpuLayout.cpuset(group.cpus())));
    }
    command.addAll(process.argv());
    Path log = Path.of(process.log());
    Files.createDirectories(log.getParent());
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .directory(log.getParent().toFile());
    // The shared settings file is the whole environment of Partita settings: none leaks in from here.
    builder.environment().keySet().removeIf(k -> k.startsWith("PARTITA_") || k.startsWith("KAFKA_"));
    builder.environment().putAll(env);
    return builder.start().pid();
  }

  /**
   * Whether {@code pid}, a process this cluster started, is still alive: there, not a zombie, and
   * not a recycled pid (its command line carries {@code mark}). An empty command line counts as
   * ours: the kernel shows none while a process is between {@code exec}s (setsid, sh, ip, java),
   * and a zombie, which has none either, is told by its state.
   */
  static boolean alive(long pid, String mark) {
    if (pid <= 0) {
      return false;
    }
    char state = state(pid);
    if (state == '?' || state == 'Z') {
      return false;
    }
    String cmdline = cmdline(pid);
    return cmdline.isEmpty() || cmdline.contains(mark);
  }

  /** The process's state letter from {@code /proc/PID/stat} ({@code R}, {@code S}, {@code T} stopped, {@code Z}); '?' if gone. */
  static char state(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      int close = stat.lastIndexOf(')');
      return stat.charAt(close + 2);
    } catch (IOException | RuntimeException e) {
      return '?';
    }
  }

  static String cmdline(long pid) {
    try {
      return new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")), StandardCharsets.UTF_8).replace('\0', ' ');
    } catch (IOException e) {
      return "";
    }
  }

  /** Every live process whose command line carries {@code mark}. */
  static List<Long> marked(String mark) {
    List<Long> out = new ArrayList<>();
    try (DirectoryStream<Path> proc = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
      for (Path p : proc) {
        long pid = Long.parseLong(p.getFileName().toString());
        if (pid != ProcessHandle.current().pid() && state(pid) != 'Z' && cmdline(pid).contains(mark)) {
          out.add(pid);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot list /proc: " + e.getMessage(), e);
    }
    return out;
  }

  /** Sends {@code signal} ({@code KILL}, {@code TERM}, {@code STOP}, {@code CONT}); false if the process is gone. */
  static boolean signal(long pid, String signal) {
    return Shell.run(List.of("kill", "-" + signal, Long.toString(pid))).ok();
  }

  /** Waits until the process is gone (or a zombie); true if it is. */
  static boolean awaitExit(long pid, String mark, Duration timeout) throws InterruptedException {
    long until = System.nanoTime() + timeout.toNanos();
    while (alive(pid, mark)) {
      if (System.nanoTime() > until) {
        return false;
      }
      Thread.sleep(50); // not our child (started through nsenter): no exit notification to wait on
    }
    return true;
  }

  /** The last {@code lines} lines of a log, for an error message. */
  static String tail(String log, int lines) {
    try {
      List<String> all = Files.readAllLines(Path.of(log), StandardCharsets.UTF_8);
      return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException | RuntimeException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }
}

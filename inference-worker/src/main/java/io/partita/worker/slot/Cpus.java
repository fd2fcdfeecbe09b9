package io.partita.worker.slot;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The CPUs this process may use, and pinning the calling thread to some of them.
 *
 * <p>Java has no affinity API, so pinning finds the thread's kernel id through /proc/thread-self
 * and runs {@code taskset -p -c CPUS TID}, as the profiler does (this is a copy of its small
 * {@code ThreadPinning}, so that the worker does not depend on the profiler module). Best effort: it
 * returns false when taskset is missing or refused, and the slot reports "not pinned".
 */
public final class Cpus {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private Cpus() {}

  /** CPU ids from the process's affinity mask; 0..n-1 when it cannot be read (not Linux). */
  public static List<Integer> usable() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("Cpus_allowed_list:")) {
          return parseList(line.substring(line.indexOf(':') + 1));
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or /proc is hidden: fall through
    }
    return IntStream.range(0, Runtime.getRuntime().availableProcessors()).boxed().toList();
  }

  /** Parses a kernel CPU list such as {@code 0-3,8,10-11}; sorted, without duplicates. */
  public static List<Integer> parseList(String list) {
    return io.partita.common.CpuList.parse(list);
  }

  /** Pins the calling thread to {@code cpus}; false when it could not. */
  public static boolean pinCurrentThread(List<Integer> cpus) {
    if (cpus.isEmpty()) {
      return false;
    }
    String tid;
    try {
      tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
    String list = cpus.stream().map(String::valueOf).collect(Collectors.joining(","));
    try {
      Process p = new ProcessBuilder("taskset", "-p", "-c", list, tid).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The CPUs the calling thread may run on, as the kernel reports them. */
  public static List<Integer> currentThread() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
      if (line.startsWith("Cpus_allowed_list:")) {
        return parseList(line.substring(line.indexOf(':') + 1));
      }
    }
    throw new IOException("no Cpus_allowed_list in /proc/thread-self/status");
  }
}

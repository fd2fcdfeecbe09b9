package io.partita.profiler.measure;

import io.partita.profiler.env.CommandRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Pins the calling Java thread to CPUs. Java has no affinity API, so this finds the thread's kernel
 * id through /proc/thread-self and runs {@code taskset -p -c CPUS TID}. Best effort: it returns
 * false (and the measurement records "not pinned") when taskset is missing or refused.
 *
 * <p>Threads started afterwards by this thread (ONNX Runtime's intra-op pool) inherit the mask
 * until ONNX Runtime sets their own.
 */
public final class ThreadPinning {

  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private ThreadPinning() {}

  /** Pins the current thread to {@code cpus}; false when it could not. */
  public static boolean pinCurrentThread(List<Integer> cpus, CommandRunner commands) {
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
    return commands.run(List.of("taskset", "-p", "-c", list, tid), TIMEOUT).isPresent();
  }

  /** The CPUs the current thread may run on, as the kernel reports them. */
  public static List<Integer> currentThreadCpus() throws IOException {
    String status = Files.readString(Path.of("/proc/thread-self/status"));
    for (String line : status.split("\n")) {
      if (line.startsWith("Cpus_allowed_list:")) {
        return io.partita.profiler.env.ProcFiles.parseCpuList(line.substring(line.indexOf(':') + 1));
      }
    }
    throw new IOException("no Cpus_allowed_list in /proc/thread-self/status");
  }
}

package io.partita.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The CPUs this process may use, and pinning threads to them: the one implementation the profiler
 * and the worker both pin with.
 *
 * <p>Java has no affinity API, so pinning finds the thread's kernel id through /proc/thread-self
 * and runs {@code taskset -p -c CPUS TID}. Best effort: it returns false when taskset is missing or
 * refused, and the caller reports "not pinned". Linux only; elsewhere nothing is pinned.
 */
public final class Pinning {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  /** Runs a command; true when it ran and exited 0. A seam so tests can make taskset fail. */
  @FunctionalInterface
  public interface Command {
    boolean run(List<String> argv, Duration timeout);
  }

  /** Runs commands as child processes, output discarded. */
  public static final Command PROCESSES = Pinning::runProcess;

  /**
   * A session opened on a pinned thread.
   *
   * @param value what the open action returned
   * @param pinned whether every pinning step succeeded (false for an unpinned slot)
   */
  public record Pinned<T>(T value, boolean pinned) {}

  /** The open action: runs on the calling thread while it is pinned to the whole partition. */
  @FunctionalInterface
  public interface Open<T, E extends Exception> {
    T open() throws E;
  }

  private Pinning() {}

  /**
   * Opens a slot's session on the calling thread, pinned the way every slot is pinned, measured
   * or served: first the thread is pinned to the whole partition, so that the intra-op threads
   * ONNX Runtime starts while {@code open} runs inherit the partition's cores (ONNX Runtime then
   * pins each to its own, through {@link SlotConfig#intraOpAffinities}); then the calling thread,
   * which runs the graph's first share itself, is pinned to the partition's first CPU, so that
   * every thread has one core. An unpinned slot runs {@code open} as it is.
   */
  public static <T, E extends Exception> Pinned<T> openPinned(SlotConfig slot, Command command, Open<T, E> open)
      throws E {
    List<Integer> cpus = slot.cpus();
    boolean pinned = !cpus.isEmpty() && pinCurrentThread(cpus, command);
    T value = open.open();
    if (pinned && cpus.size() > 1) {
      pinned = pinCurrentThread(List.of(cpus.get(0)), command);
    }
    return new Pinned<>(value, pinned);
  }

  /** {@link #openPinned(SlotConfig, Command, Open)} with real processes. */
  public static <T, E extends Exception> Pinned<T> openPinned(SlotConfig slot, Open<T, E> open) throws E {
    return openPinned(slot, PROCESSES, open);
  }

  /** CPU ids from the process's affinity mask; 0..n-1 when it cannot be read (not Linux). */
  public static List<Integer> usableCpus() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("Cpus_allowed_list:")) {
          return CpuList.parse(line.substring(line.indexOf(':') + 1));
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or /proc is hidden: fall through
    }
    return IntStream.range(0, Runtime.getRuntime().availableProcessors()).boxed().toList();
  }

  /** Pins the calling thread to {@code cpus}; false when it could not. */
  public static boolean pinCurrentThread(List<Integer> cpus) {
    return pinCurrentThread(cpus, PROCESSES);
  }

  /** Pins the calling thread to {@code cpus} through {@code command}; false when it could not. */
  public static boolean pinCurrentThread(List<Integer> cpus, Command command) {
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
    return command.run(List.of("taskset", "-p", "-c", list, tid), TIMEOUT);
  }

  /** The CPUs the calling thread may run on, as the kernel reports them. */
  public static List<Integer> currentThreadCpus() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/thread-self/status"))) {
      if (line.startsWith("Cpus_allowed_list:")) {
        return CpuList.parse(line.substring(line.indexOf(':') + 1));
      }
    }
    throw new IOException("no Cpus_allowed_list in /proc/thread-self/status");
  }

  private static boolean runProcess(List<String> argv, Duration timeout) {
    try {
      Process p = new ProcessBuilder(argv).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
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
}

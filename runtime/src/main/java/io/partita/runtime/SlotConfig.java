package io.partita.runtime;

import java.util.List;
import java.util.Objects;

/**
 * How one ONNX Runtime session of a slot runs: on which provider and device, on which CPUs, with
 * how many intra-op threads, and whether idle threads spin. The profiler measures a partition with
 * the same record the worker serves it with, and {@link SessionSettings#of} turns it into session
 * options in one place, so a profile is always of what will run.
 *
 * <p>Guarantees (checked here): a pinned slot has one intra-op thread per CPU; a CUDA slot has a
 * device index and no CPUs; only a pinned CPU slot may spin. It does not check that the CPUs or the
 * device exist on this host: the caller (the worker's assignment check, the profiler's layout) does.
 *
 * @param provider CPU or CUDA
 * @param gpu the CUDA device index; -1 for a CPU slot
 * @param cpus CPU ids, one intra-op thread pinned to each; empty for an unpinned or CUDA slot
 * @param threads intra-op threads: {@code cpus.size()} when pinned; for an unpinned slot 0 means
 *     ONNX Runtime's default (one per core)
 * @param spinning whether idle intra-op threads spin ({@code session.intra_op.allow_spinning})
 */
public record SlotConfig(Provider provider, int gpu, List<Integer> cpus, int threads, boolean spinning) {

  public SlotConfig {
    Objects.requireNonNull(provider, "provider");
    cpus = List.copyOf(cpus);
    if (threads < 0) {
      throw new IllegalArgumentException("threads must not be negative, got " + threads);
    }
    if (!cpus.isEmpty() && threads != cpus.size()) {
      throw new IllegalArgumentException(
          "a pinned slot runs one thread per CPU: " + threads + " threads, CPUs " + cpus);
    }
    if ((provider == Provider.CUDA) != (gpu >= 0)) {
      throw new IllegalArgumentException("a CUDA slot needs a device index (0, 1, ...) and a CPU slot has none (-1)");
    }
    if (provider == Provider.CUDA && !cpus.isEmpty()) {
      throw new IllegalArgumentException("a CUDA slot has no CPU partition; leave its CPUs empty");
    }
    if (spinning && cpus.isEmpty()) {
      throw new IllegalArgumentException(
          "only a pinned CPU slot may spin: unpinned threads share cores with other work");
    }
  }

  /**
   * A CPU partition: one intra-op thread pinned to each of {@code cpus}.
   *
   * <p>Spinning: idle intra-op threads of a pinned partition spin ({@code spin} true, ONNX Runtime's
   * default and the setting both the profiler and the worker use unless told otherwise) because
   * each of them has a core of its own, so a spinning thread takes cycles from nobody and the next
   * run starts without waking threads. {@code spin} false is for hosts whose cores also run other
   * work ({@code profiler.spin=false}, {@code worker.spin=false}); profile and serve with the same.
   */
  public static SlotConfig pinned(List<Integer> cpus, boolean spin) {
    if (cpus.isEmpty()) {
      throw new IllegalArgumentException("a pinned slot needs at least one CPU");
    }
    return new SlotConfig(Provider.CPU, -1, cpus, cpus.size(), spin);
  }

  /**
   * A CPU session with {@code threads} unpinned intra-op threads (0 = ONNX Runtime's default).
   * Unpinned threads never spin: they may outnumber the cores or share them with the caller,
   * Kafka clients and other slots, and a spinning thread would then take their cycles (more busy
   * threads than cores cut throughput 20-65% here).
   */
  public static SlotConfig unpinned(int threads) {
    return new SlotConfig(Provider.CPU, -1, List.of(), threads, false);
  }

  /** One CUDA device, driven by one unpinned CPU thread (which waits on the GPU; it does not spin). */
  public static SlotConfig cuda(int device) {
    return new SlotConfig(Provider.CUDA, device, List.of(), 1, false);
  }

  public boolean cuda() {
    return provider == Provider.CUDA;
  }

  public boolean isPinned() {
    return !cpus.isEmpty();
  }

  /** A one-core CPU partition: its session may be shared by several such slots of one version. */
  public boolean oneCore() {
    return provider == Provider.CPU && cpus.size() == 1;
  }

  /** The same slot on the CPU provider: what a CUDA slot falls back to when CUDA does not load. */
  public SlotConfig onCpu() {
    return cuda() ? new SlotConfig(Provider.CPU, -1, List.of(), threads, false) : this;
  }

  /**
   * ONNX Runtime's {@code session.intra_op_thread_affinities} for the partition: it pins the pool's
   * threads, not the thread that calls {@code run} ({@link Pinning#openPinned} pins that one to the
   * first CPU), so it wants {@code threads - 1} entries, ';'-separated, with 1-based processor ids:
   * CPUs [4, 5, 6] give "6;7". Empty when there is nothing to pin.
   */
  public String intraOpAffinities() {
    StringBuilder s = new StringBuilder();
    for (int i = 1; i < cpus.size(); i++) {
      if (s.length() > 0) {
        s.append(';');
      }
      s.append(cpus.get(i) + 1);
    }
    return s.toString();
  }
}

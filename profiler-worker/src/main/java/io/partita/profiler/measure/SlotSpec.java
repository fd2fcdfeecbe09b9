package io.partita.profiler.measure;

import io.partita.profiler.env.ProviderProbe.Provider;
import java.util.List;

/**
 * One ONNX Runtime session to run during a measurement, and what it runs on.
 *
 * @param cpus CPU ids the session's threads are pinned to, one thread per CPU; empty for no pinning
 * @param threads intra-op threads (equal to {@code cpus.size()} when pinned)
 * @param gpuDevice CUDA device id, or -1 for CPU slots
 * @param spinning whether idle intra-op threads spin; on only when every thread has its own core
 */
public record SlotSpec(Provider provider, List<Integer> cpus, int threads, int gpuDevice, boolean spinning) {

  public SlotSpec {
    cpus = List.copyOf(cpus);
    if (threads < 1) {
      throw new IllegalArgumentException("threads must be at least 1, got " + threads);
    }
    if (!cpus.isEmpty() && cpus.size() != threads) {
      throw new IllegalArgumentException("pinned slot needs one CPU per thread: " + threads + " threads, CPUs " + cpus);
    }
    if ((provider == Provider.CUDA) != (gpuDevice >= 0)) {
      throw new IllegalArgumentException("a GPU device is required for CUDA slots and only for them");
    }
  }

  /** A CPU partition: one intra-op thread pinned to each of {@code cpus}, spinning allowed. */
  public static SlotSpec cpu(List<Integer> cpus) {
    return new SlotSpec(Provider.CPU, cpus, cpus.size(), -1, true);
  }

  /** A CPU session with {@code threads} unpinned threads and no spinning (more threads than cores). */
  public static SlotSpec cpuUnpinned(int threads) {
    return new SlotSpec(Provider.CPU, List.of(), threads, -1, false);
  }

  /** One CUDA device, driven by one unpinned CPU thread. */
  public static SlotSpec gpu(int device) {
    return new SlotSpec(Provider.CUDA, List.of(), 1, device, false);
  }

  /**
   * The value of ONNX Runtime's {@code session.intra_op_thread_affinities} for these CPUs, or
   * empty when there is nothing to pin. ONNX Runtime pins the intra-op pool's threads, not the
   * thread that calls {@code run} (that one is pinned by {@link ThreadPinning}), so it wants
   * {@code threads - 1} entries separated by ';', and its processor ids are 1-based: CPUs
   * [4, 5, 6] give "6;7" (CPU 4 is the caller's).
   */
  public String intraOpAffinities() {
    if (cpus.size() < 2) {
      return "";
    }
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

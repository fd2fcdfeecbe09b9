package io.partita.worker.serving;

import java.util.List;

/**
 * How to open one ONNX Runtime session for a slot.
 *
 * @param cuda whether to run on the CUDA provider (device {@code gpu}), falling back to CPU
 * @param gpu the CUDA device index, or -1
 * @param cpus the partition's CPU ids, one intra-op thread pinned to each; empty for no pinning
 * @param threads intra-op threads; equal to {@code cpus.size()} when pinned; 0 = ONNX Runtime's
 *     default (one per core)
 */
public record SessionSpec(boolean cuda, int gpu, List<Integer> cpus, int threads) {
  public SessionSpec {
    cpus = List.copyOf(cpus);
    if (!cpus.isEmpty() && threads != cpus.size()) {
      throw new IllegalArgumentException("a pinned session has one thread per CPU: " + threads + " threads, CPUs " + cpus);
    }
    if (cuda && gpu < 0) {
      throw new IllegalArgumentException("a CUDA session needs a device index");
    }
  }

  /**
   * ONNX Runtime's {@code session.intra_op_thread_affinities} for the partition: it pins the pool's
   * threads, not the thread that calls {@code run} (the slot pins that one itself to the first CPU),
   * so it wants {@code threads - 1} entries, ';'-separated, with 1-based processor ids: CPUs [4, 5,
   * 6] give "6;7". Empty when there is nothing to pin.
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

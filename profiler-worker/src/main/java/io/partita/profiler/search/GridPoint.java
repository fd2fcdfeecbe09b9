package io.partita.profiler.search;

/** One configuration of the baseline search: intra-op threads and batch size. */
public record GridPoint(int threads, int batch) {
  public GridPoint {
    if (threads < 1 || batch < 1) {
      throw new IllegalArgumentException("threads and batch must be at least 1, got " + threads + " and " + batch);
    }
  }
}

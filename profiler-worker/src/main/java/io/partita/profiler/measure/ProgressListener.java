package io.partita.profiler.measure;

/** Told about each point as it starts and ends, for progress bars and status events. */
public interface ProgressListener {

  /** Point {@code index} (0-based) of {@code total} is starting. */
  void starting(int index, int total, String label);

  /** Point {@code index} of {@code total} finished (successfully or not). */
  void finished(int index, int total, String label, boolean ok);

  ProgressListener NONE = new ProgressListener() {
    @Override
    public void starting(int index, int total, String label) {}

    @Override
    public void finished(int index, int total, String label, boolean ok) {}
  };
}

package io.partita.planning;

/**
 * One measured point of a profile: a partition of {@code size} resources runs one batch in
 * {@code latencyMs} and one instance on it needs {@code memoryBytes}.
 *
 * <p>Only measured sizes ever appear in a plan: the planner never interpolates a time.
 */
public record ProfilePoint(int size, double latencyMs, long memoryBytes) {
  public ProfilePoint {
    if (size <= 0) {
      throw new IllegalArgumentException("size: must be > 0, was " + size);
    }
    if (!(latencyMs > 0) || Double.isInfinite(latencyMs)) {
      throw new IllegalArgumentException("latencyMs: must be a finite number > 0, was " + latencyMs);
    }
    if (memoryBytes < 0) {
      throw new IllegalArgumentException("memoryBytes: must be >= 0, was " + memoryBytes);
    }
  }
}

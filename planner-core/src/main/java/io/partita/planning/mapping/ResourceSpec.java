package io.partita.planning.mapping;

/**
 * One resource of the timing matrix (a CPU partition, a GPU, ...) and its kind ({@code cpu},
 * {@code gpu}).
 *
 * @param capacity how many alike units the resource stands for (1 for one pool; a class of
 *     {@code c} alike pools has capacity {@code c}): a model on it spreads its work over them, so its
 *     load there is {@code rate * T / capacity} busy ms per second of each unit, and its latency stays
 *     {@code T}
 */
public record ResourceSpec(String id, String kind, int capacity) {
  public ResourceSpec {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("resource id: must not be blank");
    }
    if (kind == null || kind.isBlank()) {
      throw new IllegalArgumentException("resource " + id + " kind: must not be blank");
    }
    if (capacity < 1) {
      throw new IllegalArgumentException("resource " + id + " capacity: must be >= 1, was " + capacity);
    }
  }

  /** One unit. */
  public ResourceSpec(String id, String kind) {
    this(id, kind, 1);
  }
}

package io.partita.planning;

/** One resource of the timing matrix (a CPU partition, a GPU, ...) and its kind ({@code cpu}, {@code gpu}). */
public record ResourceSpec(String id, String kind) {
  public ResourceSpec {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("resource id: must not be blank");
    }
    if (kind == null || kind.isBlank()) {
      throw new IllegalArgumentException("resource " + id + " kind: must not be blank");
    }
  }
}

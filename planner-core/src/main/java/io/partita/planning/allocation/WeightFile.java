package io.partita.planning.allocation;

/** A weight file (LoRA adapter or initializer overrides): where it is, its digest and its size. */
public record WeightFile(String uri, String sha256, long sizeBytes) {
  public WeightFile {
    if (sha256 == null || sha256.isBlank()) {
      throw new IllegalArgumentException("sha256: must not be blank");
    }
    if (sizeBytes < 0) {
      throw new IllegalArgumentException("sizeBytes: must be >= 0");
    }
  }
}

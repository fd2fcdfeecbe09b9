package io.partita.worker.serving;

import java.util.Objects;

/**
 * A weight file as the catalog names it: a path relative to the model repository root and the
 * sha256 its content must have.
 */
public record WeightFileRef(String path, String sha256) {
  public WeightFileRef {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(sha256, "sha256");
  }
}

package io.partita.models.repo;

import java.nio.file.Path;

/** A weight or model path that would leave the repository root; see {@link WeightFiles}. */
public final class UnsafePathException extends RepositoryException {

  public UnsafePathException(Path root, String relativePath, String problem) {
    super(null, null, "path '" + relativePath + "' refused (root " + root + "): " + problem);
  }
}

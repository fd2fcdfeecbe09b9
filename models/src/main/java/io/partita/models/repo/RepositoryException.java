package io.partita.models.repo;

import java.nio.file.Path;
import java.util.Optional;

/**
 * A model repository that cannot be used as it is: a bad manifest, a missing or mismatched file, an
 * unsafe path. The message always names the file and, where there is one, the field (in dotted form,
 * e.g. {@code serviceModels.demo-a.sha256}) and says what would fix it.
 */
public class RepositoryException extends RuntimeException {

  private final transient Path file;
  private final String field;

  public RepositoryException(Path file, String field, String problem) {
    this(file, field, problem, null);
  }

  public RepositoryException(Path file, String field, String problem, Throwable cause) {
    super(format(file, field, problem), cause);
    this.file = file;
    this.field = field;
  }

  /** The file the problem is in (or about), if any. */
  public Optional<Path> file() {
    return Optional.ofNullable(file);
  }

  /** The manifest field in dotted form, if the problem is one field's. */
  public Optional<String> field() {
    return Optional.ofNullable(field);
  }

  private static String format(Path file, String field, String problem) {
    StringBuilder sb = new StringBuilder();
    if (file != null) {
      sb.append(file).append(": ");
    }
    if (field != null) {
      sb.append(field).append(": ");
    }
    return sb.append(problem).toString();
  }
}

package io.partita.profiler.run;

/**
 * A model or version that is not in the repository. {@link #field()} says which part of the
 * request is at fault ({@code model}, {@code version} or {@code model-repo}).
 */
public final class ModelLookupException extends Exception {
  private final String field;

  public ModelLookupException(String field, String message) {
    super(message);
    this.field = field;
  }

  public String field() {
    return field;
  }
}

package io.partita.planning.cli;

/** A problem file that does not say what it must; the message starts with the field's path. */
final class ProblemException extends Exception {
  private static final long serialVersionUID = 1L;

  ProblemException(String path, String message) {
    super(path + ": " + message);
  }
}

package io.partita.planner.stream;

/** An input record that decodes but makes no sense; it goes to the dead letters with this message. */
final class Rejected extends RuntimeException {
  Rejected(String message) {
    super(message, null, false, false);
  }
}

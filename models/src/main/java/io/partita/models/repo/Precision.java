package io.partita.models.repo;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/** Numeric precision of a model version's weights, written lowercase in manifests. */
public enum Precision {
  FP32,
  FP16,
  BF16,
  INT8,
  INT4;

  /** The manifest spelling ({@code fp32}). */
  public String text() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Optional<Precision> parse(String text) {
    return Arrays.stream(values()).filter(p -> p.text().equals(text)).findFirst();
  }

  /** The accepted spellings, for error messages. */
  public static String choices() {
    return String.join(", ", Arrays.stream(values()).map(Precision::text).toList());
  }
}

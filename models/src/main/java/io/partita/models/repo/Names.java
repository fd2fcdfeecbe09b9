package io.partita.models.repo;

import java.util.regex.Pattern;

/**
 * Rules for model, version and service model names. Service model names become part of Kafka topic
 * names ({@code <prefix>.requests.<service model>}), so all names use only the characters a topic
 * name allows and stay well under its 249-character limit.
 */
public final class Names {

  /** Letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 long. */
  public static final Pattern VALID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  private Names() {}

  public static boolean isValid(String name) {
    return name != null && VALID.matcher(name).matches();
  }

  /** Human description of {@link #VALID}, for error messages. */
  public static String rule() {
    return "letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 characters";
  }
}

package io.partita.gateway.refusal;

import java.util.regex.Pattern;

/**
 * Makes a message safe to put in an answer, whatever the transport: its first line only (no stack
 * trace), absolute file paths replaced by {@code <path>}, at most 500 characters. Messages from
 * workers pass through it, since the gateway cannot vouch for what another process wrote.
 */
public final class SafeText {
  private static final Pattern UNIX_PATH = Pattern.compile("(?<![\\w.:/])/(?:[\\w.@+-]+/)+[\\w.@+-]*");
  private static final Pattern WINDOWS_PATH = Pattern.compile("\\b[A-Za-z]:\\\\[^\\s'\"]*");

  /** Longest name echoed whole in an answer; a longer one is cut and says how long it was. */
  public static final int MAX_NAME = 64;

  private SafeText() {}

  /**
   * A name from outside (model, version, input, job, file...) fit to echo in an error: control
   * characters replaced by {@code ?}, and cut to {@link #MAX_NAME} characters with its length told
   * ({@code "xxxx...(100000 characters)"}), so a 100,000-character name never comes back whole.
   */
  public static String name(String name) {
    if (name == null) {
      return "null";
    }
    boolean cut = name.length() > MAX_NAME;
    String head = cut ? name.substring(0, MAX_NAME) : name;
    StringBuilder b = new StringBuilder(head.length() + 24);
    for (int i = 0; i < head.length(); i++) {
      char c = head.charAt(i);
      b.append(Character.isISOControl(c) ? '?' : c);
    }
    if (cut) {
      b.append("...(").append(name.length()).append(" characters)");
    }
    return b.toString();
  }

  public static String clean(String message) {
    if (message == null || message.isBlank()) {
      return "no message";
    }
    String s = message.strip();
    int newline = s.indexOf('\n');
    if (newline >= 0) {
      s = s.substring(0, newline).strip();
    }
    s = UNIX_PATH.matcher(s).replaceAll("<path>");
    s = WINDOWS_PATH.matcher(s).replaceAll("<path>");
    return s.length() > 500 ? s.substring(0, 497) + "..." : s;
  }
}

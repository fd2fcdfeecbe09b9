package io.partita.gateway.http;

import java.util.regex.Pattern;

/**
 * Makes a message safe to put in an HTTP answer: its first line only (no stack trace), absolute
 * file paths replaced by {@code <path>}, at most 500 characters. Messages from workers pass through
 * it, since the gateway cannot vouch for what another process wrote.
 */
public final class SafeText {
  private static final Pattern UNIX_PATH = Pattern.compile("(?<![\\w.:/])/(?:[\\w.@+-]+/)+[\\w.@+-]*");
  private static final Pattern WINDOWS_PATH = Pattern.compile("\\b[A-Za-z]:\\\\[^\\s'\"]*");

  private SafeText() {}

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

package io.partita.planning.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;

/**
 * Reading typed fields out of a JSON tree, each failure naming the field's path. Nothing is
 * narrowed silently: a number outside the range the planner can use is refused, never wrapped.
 */
final class Fields {
  /**
   * The largest latency (ms) and request rate (per second) a problem may give: their products are
   * summed into loads, which stay finite and exact enough within these bounds.
   */
  static final double MAX_LATENCY_MS = 1e9;

  static final double MAX_RATE = 1e9;

  private Fields() {}

  /**
   * Refuses any field of {@code node} not in {@code known}: a typo ({@code sloMS}) would otherwise
   * drop a constraint without a word.
   */
  static void onlyKnown(JsonNode node, String path, String... known) throws ProblemException {
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!List.of(known).contains(name)) {
        String at = path.isEmpty() ? name : path + "." + name;
        String hint = closest(name, known);
        throw new ProblemException(at, "unknown field" + (hint == null ? "" : " (did you mean '" + hint + "'?)")
            + "; known here: " + String.join(", ", known));
      }
    }
  }

  /** The known name a typo most likely meant: equal ignoring case, or at most two edits away. */
  private static String closest(String name, String... known) {
    String best = null;
    int bestDistance = 3;
    for (String k : known) {
      int d = k.equalsIgnoreCase(name) ? 0 : distance(name.toLowerCase(Locale.ROOT), k.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = k;
        bestDistance = d;
      }
    }
    return best;
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  static JsonNode object(JsonNode parent, String field, String path) throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      throw new ProblemException(path, "is required");
    }
    if (!n.isObject()) {
      throw new ProblemException(path, "must be an object");
    }
    return n;
  }

  static List<JsonNode> array(JsonNode parent, String field, String path, boolean nonEmpty)
      throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      throw new ProblemException(path, "is required");
    }
    if (!n.isArray()) {
      throw new ProblemException(path, "must be an array");
    }
    if (nonEmpty && n.isEmpty()) {
      throw new ProblemException(path, "must not be empty");
    }
    List<JsonNode> out = new ArrayList<>();
    n.forEach(out::add);
    return out;
  }

  static String text(JsonNode parent, String field, String path) throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      throw new ProblemException(path, "is required");
    }
    if (!n.isTextual() || n.asText().isBlank()) {
      throw new ProblemException(path, "must be a non-empty string");
    }
    return n.asText();
  }

  static String optionalText(JsonNode parent, String field, String path, String fallback)
      throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return fallback;
    }
    return text(parent, field, path);
  }

  /** An integer in {@code [min, max]}; anything else (a fraction, a number past 64 bits) is refused. */
  static long integer(JsonNode parent, String field, String path, long min, long max) throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      throw new ProblemException(path, "is required");
    }
    if (!n.isIntegralNumber()) {
      throw new ProblemException(path, "must be an integer, was " + n);
    }
    if (!n.canConvertToLong() || n.asLong() < min || n.asLong() > max) {
      throw new ProblemException(path, "must be " + (min == 1 ? "> 0" : ">= " + min) + " and at most " + max
          + ", was " + n.asText());
    }
    return n.asLong();
  }

  static long optionalInteger(JsonNode parent, String field, String path, long min, long max, long fallback)
      throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return fallback;
    }
    return integer(parent, field, path, min, max);
  }

  /** An integer in {@code [min, max]} with {@code max} at most {@link Integer#MAX_VALUE}: never narrowed. */
  static int smallInteger(JsonNode parent, String field, String path, int min, int max) throws ProblemException {
    return Math.toIntExact(integer(parent, field, path, min, max));
  }

  /**
   * A finite number at most {@code max}; {@code positive} demands {@code > 0}, otherwise
   * {@code >= 0}. NaN and the infinities are refused by name.
   */
  static double number(JsonNode n, String path, boolean positive, double max) throws ProblemException {
    if (n == null || n.isNull()) {
      throw new ProblemException(path, "is required");
    }
    if (!n.isNumber()) {
      throw new ProblemException(path, "must be a number, was " + n);
    }
    double v = n.asDouble();
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      throw new ProblemException(path, "must be a finite number, was " + v);
    }
    if (positive ? !(v > 0) : !(v >= 0)) {
      throw new ProblemException(path, "must be " + (positive ? "> 0" : ">= 0") + ", was " + v);
    }
    if (v > max) {
      throw new ProblemException(path, "must be at most " + max + ", was " + v);
    }
    return v;
  }

  static Double optionalNumber(JsonNode parent, String field, String path, boolean positive, double max)
      throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return null;
    }
    return number(n, path, positive, max);
  }
}

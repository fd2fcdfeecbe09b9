package io.partita.planning.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** Reading typed fields out of a JSON tree, each failure naming the field's path. */
final class Fields {
  private Fields() {}

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

  static long integer(JsonNode parent, String field, String path, long min) throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      throw new ProblemException(path, "is required");
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong()) {
      throw new ProblemException(path, "must be an integer");
    }
    long v = n.asLong();
    if (v < min) {
      throw new ProblemException(path, "must be " + (min == 1 ? "> 0" : ">= " + min) + ", was " + v);
    }
    return v;
  }

  static long optionalInteger(JsonNode parent, String field, String path, long min, long fallback)
      throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return fallback;
    }
    return integer(parent, field, path, min);
  }

  static int smallInteger(JsonNode parent, String field, String path, int min) throws ProblemException {
    long v = integer(parent, field, path, min);
    if (v > Integer.MAX_VALUE) {
      throw new ProblemException(path, "must be at most " + Integer.MAX_VALUE);
    }
    return (int) v;
  }

  /** A finite number; {@code positive} demands {@code > 0}, otherwise {@code >= 0}. */
  static double number(JsonNode n, String path, boolean positive) throws ProblemException {
    if (n == null || n.isNull()) {
      throw new ProblemException(path, "is required");
    }
    if (!n.isNumber()) {
      throw new ProblemException(path, "must be a number");
    }
    double v = n.asDouble();
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      throw new ProblemException(path, "must be finite");
    }
    if (positive ? !(v > 0) : !(v >= 0)) {
      throw new ProblemException(path, "must be " + (positive ? "> 0" : ">= 0") + ", was " + v);
    }
    return v;
  }

  static Double optionalNumber(JsonNode parent, String field, String path, boolean positive)
      throws ProblemException {
    JsonNode n = parent.get(field);
    if (n == null || n.isNull()) {
      return null;
    }
    return number(n, path, positive);
  }
}

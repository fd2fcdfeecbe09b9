package io.partita.common.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Layered key/value settings: defaults, then an optional properties file, then {@code PARTITA_*}
 * environment variables ({@code PARTITA_HTTP_PORT} is {@code http.port}), then command-line flags;
 * the last layer wins. Keys under {@code kafka.} pass through to the Kafka clients. Each service
 * turns its settings into one immutable config record at start.
 */
public final class Settings {
  private final Map<String, String> values;

  private Settings(Map<String, String> values) {
    this.values = Collections.unmodifiableMap(new TreeMap<>(values));
  }

  public static Builder builder() {
    return new Builder();
  }

  public static Settings of(Map<String, String> values) {
    return new Settings(values);
  }

  public String string(String key, String fallback) {
    String value = values.get(key);
    return value == null || value.isBlank() ? fallback : value.strip();
  }

  public int integer(String key, int fallback, int min, int max) {
    String value = values.get(key);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      int parsed = Integer.parseInt(value.strip());
      if (parsed < min || parsed > max) {
        throw new ConfigException(key + "=" + value + ": must be between " + min + " and " + max);
      }
      return parsed;
    } catch (NumberFormatException e) {
      throw new ConfigException(key + "=" + value + ": not a whole number");
    }
  }

  public long longValue(String key, long fallback, long min, long max) {
    String value = values.get(key);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      long parsed = Long.parseLong(value.strip());
      if (parsed < min || parsed > max) {
        throw new ConfigException(key + "=" + value + ": must be between " + min + " and " + max);
      }
      return parsed;
    } catch (NumberFormatException e) {
      throw new ConfigException(key + "=" + value + ": not a whole number");
    }
  }

  public boolean bool(String key, boolean fallback) {
    String value = values.get(key);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    return switch (value.strip().toLowerCase(Locale.ROOT)) {
      case "true", "yes", "1", "on" -> true;
      case "false", "no", "0", "off" -> false;
      default -> throw new ConfigException(key + "=" + value + ": expected true or false");
    };
  }

  /** The settings under {@code kafka.}, with the prefix removed, for the Kafka clients. */
  public Properties kafka() {
    Properties props = new Properties();
    values.forEach((k, v) -> {
      if (k.startsWith("kafka.")) {
        props.setProperty(k.substring("kafka.".length()), v);
      }
    });
    return props;
  }

  /** All settings with secrets masked, for the one log line at start. */
  public Map<String, String> masked() {
    Map<String, String> out = new TreeMap<>();
    values.forEach((k, v) -> out.put(k, isSecret(k) ? "****" : v));
    return out;
  }

  /** Whether the value of {@code key} is a secret (a password, a JAAS config, API keys): masked in logs. */
  public static boolean isSecret(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    return k.contains("password") || k.contains("secret") || k.contains("api-keys") || k.contains("jaas");
  }

  public static final class Builder {
    private final Map<String, String> values = new TreeMap<>();

    public Builder defaults(Map<String, String> defaults) {
      values.putAll(defaults);
      return this;
    }

    public Builder file(Path path) {
      if (path == null) {
        return this;
      }
      if (!Files.isRegularFile(path)) {
        throw new ConfigException("config file " + path + " does not exist");
      }
      Properties props = new Properties();
      try (Reader reader = Files.newBufferedReader(path)) {
        props.load(reader);
      } catch (IOException e) {
        throw new ConfigException("config file " + path + " cannot be read: " + e.getMessage());
      }
      props.forEach((k, v) -> values.put(k.toString(), v.toString()));
      return this;
    }

    /** {@code PARTITA_HTTP_PORT=9000} sets {@code http.port}; a double underscore is a dash ({@code PARTITA_API__KEYS} sets {@code api-keys}). */
    public Builder environment(Map<String, String> env) {
      env.forEach((k, v) -> {
        if (k.startsWith("PARTITA_")) {
          values.put(k.substring("PARTITA_".length()).toLowerCase(Locale.ROOT).replace("__", "-").replace('_', '.'), v);
        }
      });
      return this;
    }

    public Builder overrides(Map<String, String> flags) {
      flags.forEach((k, v) -> {
        if (v != null) {
          values.put(k, v);
        }
      });
      return this;
    }

    public Settings build() {
      return new Settings(values);
    }
  }
}

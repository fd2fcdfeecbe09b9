package io.partita.launcher.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * An env-style file ({@code KEY=VALUE} lines, {@code #} comments, blank lines), as docker-compose's
 * {@code env_file} reads it: the value is the rest of the line, unquoted, never expanded. Holds the
 * settings every service of a deployment shares: {@code PARTITA_*} for Partita's services (read by
 * {@code Settings}) and {@code KAFKA_*} for the brokers, named as the {@code apache/kafka} image
 * names them ({@link #kafkaProperties}). {@code compose/partita.env} is such a file; the launcher
 * carries a copy of it ({@link #SHARED_RESOURCE}), so {@code partita cluster} starts its services
 * with what compose deploys.
 */
public final class EnvFile {
  /** The copy of {@code compose/partita.env} in the launcher jar. */
  public static final String SHARED_RESOURCE = "/io/partita/launcher/cluster/partita.env";

  /**
   * {@code KAFKA_*} variables the image's start scripts read for the JVM, never broker settings.
   */
  private static final Set<String> NOT_SETTINGS = Set.of("KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS",
      "KAFKA_GC_LOG_OPTS", "KAFKA_JMX_OPTS", "KAFKA_LOG4J_OPTS", "KAFKA_DEBUG", "KAFKA_HOME", "KAFKA_VERSION",
      "KAFKA_LOG_DIR", "KAFKA_CLASSPATH");

  private EnvFile() {}

  /** The variables of {@code text} in file order; a line that is not {@code KEY=VALUE} is an error naming it. */
  public static Map<String, String> parse(String text, String origin) {
    Map<String, String> out = new LinkedHashMap<>();
    List<String> lines = text.lines().toList();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int eq = line.indexOf('=');
      String key = eq <= 0 ? "" : line.substring(0, eq).strip();
      if (!key.matches("[A-Za-z_][A-Za-z0-9_]*")) {
        throw new IllegalArgumentException(origin + " line " + (i + 1) + ": expected NAME=VALUE, got '" + line + "'");
      }
      out.put(key, line.substring(eq + 1).strip());
    }
    return out;
  }

  public static Map<String, String> read(Path file) {
    try {
      return parse(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read the settings file " + file + ": " + e.getMessage(), e);
    }
  }

  /** The shared settings the launcher carries (compose/partita.env at build time). */
  public static Map<String, String> shared() {
    try (InputStream in = EnvFile.class.getResourceAsStream(SHARED_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("the launcher carries no " + SHARED_RESOURCE + " (built without compose/partita.env?)");
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), "compose/partita.env");
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + SHARED_RESOURCE + ": " + e.getMessage(), e);
    }
  }

  /**
   * Broker settings from {@code KAFKA_*} variables, converted as the {@code apache/kafka} image
   * converts them: prefix dropped, lower-cased, {@code ___} is {@code -}, {@code __} is {@code _},
   * {@code _} is {@code .} ({@code KAFKA_MIN_INSYNC_REPLICAS} is {@code min.insync.replicas}).
   */
  public static Properties kafkaProperties(Map<String, String> env) {
    Properties out = new Properties();
    env.forEach((k, v) -> {
      if (k.startsWith("KAFKA_") && !NOT_SETTINGS.contains(k)) {
        out.setProperty(kafkaKey(k), v);
      }
    });
    return out;
  }

  public static String kafkaKey(String variable) {
    String rest = variable.substring("KAFKA_".length()).toLowerCase(Locale.ROOT);
    return rest.replace("___", "\u0001").replace("__", "\u0002").replace('_', '.').replace('\u0001', '-').replace('\u0002', '_');
  }

  /** The variable that sets broker setting {@code key} ({@link #kafkaKey}'s inverse). */
  public static String kafkaVariable(String key) {
    return "KAFKA_" + key.replace("_", "__").replace("-", "___").replace('.', '_').toUpperCase(Locale.ROOT);
  }

  /** The variable that sets Partita setting {@code key} ({@code Settings}' environment mapping inverted). */
  public static String partitaVariable(String key) {
    return "PARTITA_" + key.replace("-", "__").replace('.', '_').toUpperCase(Locale.ROOT);
  }
}

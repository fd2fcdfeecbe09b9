package io.partita.schemas;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;

/**
 * Every released version of every Partita record schema, so a reader built today decodes what an
 * older writer produced. The versions live as self-contained schema files under
 * {@code io/partita/schemas/history/}, listed in {@code index.txt} as {@code <full name> <file>}.
 *
 * <p>Changing a record means: edit its .avsc, keep the change compatible (new fields need
 * defaults), and add the new version's full schema to the history. {@code SchemaEvolutionTest}
 * fails the build when a checked-in fixture written by an older version stops decoding.
 */
public final class SchemaHistory {
  private static final String ROOT = "/io/partita/schemas/history/";
  private static final Map<String, List<Schema>> VERSIONS = load();

  private SchemaHistory() {}

  /** The released versions of a record, oldest first; empty when none was released yet. */
  public static List<Schema> versionsOf(String fullName) {
    return VERSIONS.getOrDefault(fullName, List.of());
  }

  /** All record names that have a history. */
  public static List<String> names() {
    return List.copyOf(VERSIONS.keySet());
  }

  private static Map<String, List<Schema>> load() {
    Map<String, List<Schema>> versions = new TreeMap<>();
    try (InputStream in = SchemaHistory.class.getResourceAsStream(ROOT + "index.txt")) {
      if (in == null) {
        return versions;
      }
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      String line;
      while ((line = reader.readLine()) != null) {
        line = line.strip();
        if (line.isEmpty() || line.startsWith("#")) {
          continue;
        }
        String[] parts = line.split("\\s+");
        if (parts.length != 2) {
          throw new IllegalStateException("schema history index: bad line '" + line + "'");
        }
        Schema schema = AvroCodec.parseResource(ROOT + parts[1]);
        if (!schema.getFullName().equals(parts[0])) {
          throw new IllegalStateException(
              "schema history index: " + parts[1] + " holds " + schema.getFullName() + ", not " + parts[0]);
        }
        versions.computeIfAbsent(parts[0], k -> new ArrayList<>()).add(schema);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    versions.replaceAll((k, v) -> List.copyOf(v));
    return versions;
  }
}

package io.partita.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A schema change that would break readers of records already on a topic fails the build here:
 * every released version of every record has a checked-in fixture that the current code must
 * still decode, and every current schema must be a released version (see {@link Fixtures}).
 */
class SchemaEvolutionTest {

  /** Each "name file" line of the history index, e.g. {@code InferenceRequest InferenceRequest-v1.avsc}. */
  static Stream<String[]> released() {
    String index = Fixtures.resource("/io/partita/schemas/history/index.txt");
    return index.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).map(l -> {
      String[] parts = l.strip().split("\\s+");
      String simple = parts[0].substring(parts[0].lastIndexOf('.') + 1);
      return new String[] {simple, parts[1].replace(".avsc", "")};
    });
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("released")
  void shouldDecodeTheFixtureOfEveryReleasedVersion(String name, String release) throws IOException {
    Class<? extends SpecificRecord> type = Fixtures.recordClass(name);
    byte[] bin;
    try (InputStream in = getClass().getResourceAsStream("/fixtures/" + release + ".bin")) {
      assertThat(in).as("fixture %s.bin (run Fixtures, see its Javadoc)", release).isNotNull();
      bin = in.readAllBytes();
    }
    SpecificRecord decoded = AvroCodec.of(type).decode(bin);
    // The same sample, read from its JSON with the schema of its release, resolved to today's class.
    Schema writer = new Schema.Parser().parse(Fixtures.resource("/io/partita/schemas/history/" + release + ".avsc"));
    SpecificRecord expected = Fixtures.readJson(Fixtures.resource("/fixtures/" + release + ".json"), writer, type);
    assertThat(decoded).isEqualTo(expected);
  }

  @Test
  void shouldIndexEveryJsonSample() throws Exception {
    String index = Fixtures.resource("/io/partita/schemas/history/index.txt");
    try (var samples = java.nio.file.Files.list(java.nio.file.Path.of("src/test/resources/fixtures"))) {
      for (java.nio.file.Path sample : samples.filter(p -> p.toString().endsWith(".json")).toList()) {
        String release = sample.getFileName().toString().replace(".json", "");
        assertThat(index).as("%s has a JSON sample but is not in the schema history: run Fixtures", release)
            .contains(" " + release + ".avsc");
      }
    }
  }

  @Test
  void shouldKeepEveryReleasedNameReadableAndCurrentlyReleased() {
    List<String> names = SchemaHistory.names();
    assertThat(names).isNotEmpty();
    for (String fullName : names) {
      Class<? extends SpecificRecord> type = Fixtures.recordClass(fullName.substring(fullName.lastIndexOf('.') + 1));
      Schema current = SpecificData.getForClass(type).getSchema(type);
      long fingerprint = SchemaNormalization.parsingFingerprint64(current);
      List<Schema> history = SchemaHistory.versionsOf(fullName);
      assertThat(history)
          .as("%s changed: release its new version (add a JSON sample and run Fixtures, see its Javadoc)", fullName)
          .anyMatch(s -> SchemaNormalization.parsingFingerprint64(s) == fingerprint);
      for (Schema old : history) {
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(current, old).getType())
            .as("%s can read what an older release wrote", fullName)
            .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
      }
    }
  }
}

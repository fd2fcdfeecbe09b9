package io.partita.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A schema change that would break readers of records already on a topic fails the build here. */
class SchemaEvolutionTest {

  @ParameterizedTest
  @ValueSource(strings = {"Tensor", "InferenceRequest", "InferenceReply", "DeadLetter"})
  void shouldDecodeRecordsWrittenByEveryReleasedVersion(String name) throws Exception {
    SpecificRecord expected =
        Fixtures.ALL.stream().filter(r -> r.getSchema().getName().equals(name)).findFirst().orElseThrow();
    AvroCodec<?> codec = AvroCodec.of(expected.getClass());
    int checked = 0;
    for (int version = 1; ; version++) {
      try (InputStream in = getClass().getResourceAsStream("/fixtures/" + name + "-v" + version + ".bin")) {
        if (in == null) {
          break;
        }
        SpecificRecord decoded = codec.decode(in.readAllBytes());
        // Fields present in v1 keep their values; later fields take their defaults.
        for (Schema.Field field : expected.getSchema().getFields()) {
          if (decoded.getSchema().getField(field.name()) != null && version == 1) {
            assertThat(decoded.get(decoded.getSchema().getField(field.name()).pos()))
                .as("%s.%s from v%d", name, field.name(), version)
                .isEqualTo(expected.get(field.pos()));
          }
        }
        checked++;
      }
    }
    assertThat(checked).as("fixtures for %s", name).isPositive();
  }

  @Test
  void shouldKeepEveryCurrentSchemaReadableAgainstItsHistory() {
    for (SpecificRecord record : Fixtures.ALL) {
      Schema current = record.getSchema();
      List<Schema> history = SchemaHistory.versionsOf(current.getFullName());
      assertThat(history).as("history of %s", current.getFullName()).isNotEmpty();
      for (Schema old : history) {
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(current, old).getType())
            .as("%s can read what %s wrote", current.getFullName(), old)
            .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
      }
    }
  }

  @Test
  void shouldListTheCurrentSchemaInTheHistorySoOldReadersCanBeTestedLater() {
    for (SpecificRecord record : Fixtures.ALL) {
      Schema current = record.getSchema();
      long fingerprint = SchemaNormalization.parsingFingerprint64(current);
      assertThat(SchemaHistory.versionsOf(current.getFullName()))
          .as("%s changed: add its new version to the schema history (see SchemaHistory)", current.getFullName())
          .anyMatch(s -> SchemaNormalization.parsingFingerprint64(s) == fingerprint);
    }
  }
}

package io.partita.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.DeadLetter;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The self-contained schema files a client outside Java reads ({@code src/main/avro-standalone}):
 * each parses on its own (every named type it uses is defined inside it), is the schema the code
 * writes, and has the fingerprint docs/wire-format.md gives. To rewrite them after a schema change:
 * {@code mvn -pl schemas test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.partita.schemas.StandaloneSchemasTest}, then update the fingerprints in the doc.
 */
class StandaloneSchemasTest {
  static final Path DIR = Path.of("src/main/avro-standalone");
  static final Path DOC = Path.of("../docs/wire-format.md");

  static List<Schema> published() {
    return List.of(InferenceRequest.getClassSchema(), InferenceReply.getClassSchema(), DeadLetter.getClassSchema());
  }

  /** Writes the standalone files from the generated classes. */
  public static void main(String[] args) throws Exception {
    Files.createDirectories(DIR);
    for (Schema s : published()) {
      Files.writeString(DIR.resolve(s.getName() + ".avsc"), s.toString(true) + "\n", StandardCharsets.UTF_8);
    }
  }

  static String hex(long fingerprint) {
    return String.format(Locale.ROOT, "%016x", fingerprint);
  }

  /** The 8 bytes after {@code C3 01} on the wire: the fingerprint, little-endian. */
  static String wireBytes(long fingerprint) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      b.append(i == 0 ? "" : " ").append(String.format(Locale.ROOT, "%02X", (fingerprint >>> (8 * i)) & 0xff));
    }
    return b.toString();
  }

  @ParameterizedTest
  @MethodSource("published")
  void shouldParseAloneAndEqualTheSchemaTheCodeWrites(Schema schema) throws Exception {
    Path file = DIR.resolve(schema.getName() + ".avsc");
    Schema alone = new Schema.Parser().parse(Files.readString(file)); // a fresh parser: nothing defined elsewhere
    assertThat(alone).as(file + " is stale; rewrite it with this test's main").isEqualTo(schema);
    assertThat(SchemaNormalization.parsingFingerprint64(alone)).isEqualTo(SchemaNormalization.parsingFingerprint64(schema));
  }

  @ParameterizedTest
  @MethodSource("published")
  void shouldGiveTheFingerprintTheDocumentationStates(Schema schema) throws Exception {
    long fp = SchemaNormalization.parsingFingerprint64(schema);
    String doc = Files.readString(DOC);
    Matcher row = Pattern.compile("\\| `" + schema.getName() + "` \\| `([0-9a-f]{16})` \\| `([0-9A-F ]{23})` \\|").matcher(doc);
    assertThat(row.find()).as("docs/wire-format.md has no fingerprint row for " + schema.getName()).isTrue();
    assertThat(row.group(1)).as("fingerprint of " + schema.getName() + " in docs/wire-format.md").isEqualTo(hex(fp));
    assertThat(row.group(2)).as("wire bytes of " + schema.getName() + " in docs/wire-format.md").isEqualTo(wireBytes(fp));
  }
}

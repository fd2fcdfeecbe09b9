package io.partita.schemas;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;

/**
 * Schema fixtures: for every record {@code <Name>} and released version {@code vN}, a sample in
 * Avro's JSON encoding ({@code fixtures/<Name>-vN.json}, written by hand), the same sample in
 * single-object encoding ({@code fixtures/<Name>-vN.bin}) and the full schema of that version in
 * the schema history.
 *
 * <p>To add a record or release a changed one: edit its .avsc, write the JSON sample, then run
 * from {@code schemas/}: {@code mvn test-compile exec:java -Dexec.mainClass=io.partita.schemas.Fixtures
 * -Dexec.classpathScope=test -Dexec.args=v1} (or {@code v2}, ...). It writes the .bin files and
 * history entries that are missing and never rewrites a released one.
 */
public final class Fixtures {
  static final Path FIXTURES = Path.of("src/test/resources/fixtures");
  static final Path HISTORY = Path.of("src/main/resources/io/partita/schemas/history");

  private Fixtures() {}

  /** The generated class of a record name, e.g. {@code InferenceRequest}. */
  @SuppressWarnings("unchecked")
  static Class<? extends SpecificRecord> recordClass(String name) {
    try {
      return (Class<? extends SpecificRecord>) Class.forName("io.partita.avro." + name);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("no generated class io.partita.avro." + name, e);
    }
  }

  /** Reads a JSON sample with the given (writer) schema into the current class. */
  static SpecificRecord readJson(String json, Schema writer, Class<? extends SpecificRecord> type) {
    try {
      Schema reader = SpecificData.getForClass(type).getSchema(type);
      SpecificDatumReader<SpecificRecord> datumReader = new SpecificDatumReader<>(writer, reader, SpecificData.getForClass(type));
      return datumReader.read(null, DecoderFactory.get().jsonDecoder(writer, json));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String resource(String path) {
    try (InputStream in = Fixtures.class.getResourceAsStream(path)) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  public static void main(String[] args) throws Exception {
    String version = args.length > 0 ? args[0] : "v1";
    Path index = HISTORY.resolve("index.txt");
    List<String> lines = Files.exists(index) ? new ArrayList<>(Files.readAllLines(index)) : new ArrayList<>();
    try (DirectoryStream<Path> samples = Files.newDirectoryStream(FIXTURES, "*-" + version + ".json")) {
      for (Path sample : samples) {
        String file = sample.getFileName().toString();
        String name = file.substring(0, file.length() - ("-" + version + ".json").length());
        Class<? extends SpecificRecord> type = recordClass(name);
        Schema current = SpecificData.getForClass(type).getSchema(type);
        Path bin = FIXTURES.resolve(name + "-" + version + ".bin");
        Path avsc = HISTORY.resolve(name + "-" + version + ".avsc");
        String line = current.getFullName() + " " + avsc.getFileName();
        if (Files.exists(bin) && Files.exists(avsc)) {
          if (!lines.contains(line)) {
            lines.add(line); // released but not indexed (two generators ran at once): index it again
          }
          continue; // released: never rewritten
        }
        SpecificRecord record = readJson(Files.readString(sample), current, type);
        Files.write(bin, ((AvroCodec) AvroCodec.of(type)).encode(record));
        Files.writeString(avsc, current.toString(true));
        if (!lines.contains(line)) {
          lines.add(line);
        }
        System.out.println("wrote " + bin + " and " + avsc);
      }
    }
    Files.write(index, lines);
  }
}

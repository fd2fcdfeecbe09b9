package io.partita.schemas;

import io.partita.avro.DeadLetter;
import io.partita.avro.ErrorCode;
import io.partita.avro.InferenceError;
import io.partita.avro.InferenceReply;
import io.partita.avro.InferenceRequest;
import io.partita.avro.Tensor;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;

/**
 * The sample records behind the checked-in fixtures. {@link #main} writes them (and the schema
 * history files) once per released schema version; the evolution test then reads them forever.
 *
 * <p>Run from the repository root when releasing a new schema version:
 * {@code mvn -pl schemas test-compile exec:java -Dexec.mainClass=io.partita.schemas.Fixtures
 * -Dexec.classpathScope=test -Dexec.args="v2"}
 */
public final class Fixtures {
  static final Tensor TENSOR =
      Tensor.newBuilder()
          .setName("input")
          .setDatatype("FP32")
          .setShape(List.of(1L, 2L))
          .setData(ByteBuffer.wrap(new byte[] {0, 0, (byte) 0x80, 0x3f, 0, 0, 0, 0x40}))
          .build();

  static final InferenceRequest REQUEST =
      InferenceRequest.newBuilder()
          .setId("fixture-request")
          .setServiceModel("demo-a")
          .setVersion("1")
          .setInputs(List.of(TENSOR))
          .build();

  static final InferenceReply REPLY =
      InferenceReply.newBuilder()
          .setId("fixture-request")
          .setServiceModel("demo-a")
          .setError(new InferenceError(ErrorCode.BAD_INPUT, "input 'input': expected FP32"))
          .build();

  static final DeadLetter DEAD_LETTER =
      DeadLetter.newBuilder()
          .setTopic("partita.requests.demo")
          .setPartition(0)
          .setOffset(42L)
          .setValue(ByteBuffer.wrap(new byte[] {1, 2, 3}))
          .setHeaders(Map.of("reply-to", "partita.replies.x"))
          .setError("not an InferenceRequest")
          .setErrorClass("DecodeException")
          .setComponent("worker")
          .setTimestamp(1_700_000_000_000L)
          .build();

  static final List<SpecificRecord> ALL = List.of(TENSOR, REQUEST, REPLY, DEAD_LETTER);

  public static void main(String[] args) throws Exception {
    String version = args.length > 0 ? args[0] : "v1";
    Path fixtures = Path.of("src/test/resources/fixtures");
    Path history = Path.of("src/main/resources/io/partita/schemas/history");
    Files.createDirectories(fixtures);
    Files.createDirectories(history);
    StringBuilder index = new StringBuilder();
    Path indexFile = history.resolve("index.txt");
    if (Files.exists(indexFile)) {
      index.append(Files.readString(indexFile));
    }
    for (SpecificRecord record : ALL) {
      String name = record.getSchema().getName();
      write(fixtures.resolve(name + "-" + version + ".bin"), encode(record));
      String file = name + "-" + version + ".avsc";
      Files.writeString(history.resolve(file), record.getSchema().toString(true));
      index.append(record.getSchema().getFullName()).append(' ').append(file).append('\n');
    }
    Files.writeString(indexFile, index.toString());
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static byte[] encode(SpecificRecord record) {
    return ((AvroCodec) AvroCodec.of(record.getClass())).encode(record);
  }

  private static void write(Path path, byte[] bytes) throws Exception {
    Files.write(path, bytes);
  }

  private Fixtures() {}
}

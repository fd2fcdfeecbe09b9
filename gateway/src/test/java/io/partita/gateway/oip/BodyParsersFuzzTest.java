package io.partita.gateway.oip;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.JobItem;
import io.partita.gateway.jobs.JobLines;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.server.HttpStatus;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

/**
 * Fuzzing of what the gateway parses from outside: the JSON infer body, the binary infer body
 * (JSON header plus raw tensor bytes) and batch job lines. Whatever the bytes, the only thing that
 * may escape is the documented refusal, a {@link Refusal} whose HTTP status is 4xx and a message of
 * bounded length; a job's bad line becomes an error item. Inputs are random bytes and valid bodies
 * mutated at random (bytes flipped, brackets and digits inserted, cut short, lengths lied about).
 * About 2,400 cases in all (each runs the parsers two or three times); 46 s were measured for 4,300
 * on a 2-core machine at load 30 with other builds running, so this stays well under a minute there.
 */
class BodyParsersFuzzTest {
  private static final ModelSignature SIG = new ModelSignature(
      List.of(TensorSpec.of("input", ElementType.FLOAT, -1, 8), TensorSpec.of("mask", ElementType.INT64, -1, 2),
          TensorSpec.of("half", ElementType.FLOAT16, -1, 2)),
      List.of(TensorSpec.of("output", ElementType.FLOAT, -1, 4)));
  private static final JsonLimits SMALL = new JsonLimits(16, 512, 40, 8192);
  private static final String[] VALID = {
      "{\"id\":\"a\",\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]},"
          + "{\"name\":\"mask\",\"datatype\":\"INT64\",\"shape\":[1,2],\"data\":[[1,0]]},"
          + "{\"name\":\"half\",\"datatype\":\"FP16\",\"shape\":[1,2],\"data\":[0.5,-2]}],"
          + "\"outputs\":[{\"name\":\"output\",\"parameters\":{\"binary_data\":false}}],\"parameters\":{\"timeout_ms\":100}}",
      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[2,8],\"data\":[[1,2,3,4,5,6,7,8],[1e38,2,3,4,5,6,7,-8.5e-3]]}]}",
  };
  private static final String BINARY_HEADER =
      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"parameters\":{\"binary_data_size\":32}}],"
          + "\"parameters\":{\"binary_data_output\":true}}";
  private static final String[] INSERTS = {"[", "]", "{", "}", "\"", ",", ":", "-", "9", "1e39", "1e400", "NaN", "null", "\\u0000",
      "[".repeat(40), "9".repeat(60), "\"binary_data_size\":", "-1", "18446744073709551616"};

  /** Calls the parser; passes when it returns or refuses as documented. */
  private static void parsesOrRefuses(Runnable parse) {
    try {
      parse.run();
    } catch (Refusal e) {
      assertThat(HttpStatus.of(e.kind())).as(e.getMessage()).isBetween(400, 499);
      assertThat(e.getMessage()).isNotBlank().hasSizeLessThanOrEqualTo(Refusal.MAX_MESSAGE + 3);
    }
  }

  static byte[] mutate(byte[] valid, Random r) {
    byte[] b = valid;
    int steps = 1 + r.nextInt(4);
    for (int s = 0; s < steps; s++) {
      int at = b.length == 0 ? 0 : r.nextInt(b.length + 1);
      switch (r.nextInt(5)) {
        case 0 -> { // flip a byte
          if (b.length > 0) {
            b = b.clone();
            b[Math.min(at, b.length - 1)] = (byte) r.nextInt(256);
          }
        }
        case 1 -> { // insert a token
          byte[] ins = INSERTS[r.nextInt(INSERTS.length)].getBytes(StandardCharsets.UTF_8);
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          out.write(b, 0, at);
          out.writeBytes(ins);
          out.write(b, at, b.length - at);
          b = out.toByteArray();
        }
        case 2 -> b = java.util.Arrays.copyOf(b, at); // cut short
        case 3 -> { // delete a stretch
          int end = Math.min(b.length, at + 1 + r.nextInt(8));
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          out.write(b, 0, at);
          out.write(b, end, b.length - end);
          b = out.toByteArray();
        }
        default -> { // duplicate a stretch
          int end = Math.min(b.length, at + 1 + r.nextInt(30));
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          out.write(b, 0, end);
          out.write(b, at, end - at);
          out.write(b, end, b.length - end);
          b = out.toByteArray();
        }
      }
    }
    return b;
  }

  @Property(tries = 600)
  void shouldOnlyRefuseAsDocumentedForRandomBytes(@ForAll @Size(max = 600) byte[] body) {
    parsesOrRefuses(() -> InferBody.parse(body, null, SIG, SMALL));
    parsesOrRefuses(() -> InferBody.parse(body, String.valueOf(Math.max(1, body.length / 2)), SIG, SMALL));
    parsesOrRefuses(() -> {
      List<JobItem> items = JobLines.parse(body, SIG, 50, SMALL);
      assertThat(items).isNotEmpty().hasSizeLessThanOrEqualTo(50);
    });
  }

  @Property(tries = 600)
  void shouldOnlyRefuseAsDocumentedForMutatedJsonBodies(@ForAll long seed) {
    Random r = new Random(seed);
    byte[] body = mutate(VALID[r.nextInt(VALID.length)].getBytes(StandardCharsets.UTF_8), r);
    parsesOrRefuses(() -> InferBody.parse(body, null, SIG, SMALL));
    parsesOrRefuses(() -> InferBody.parse(body, null, SIG, JsonLimits.DEFAULTS));
  }

  @Property(tries = 800)
  void shouldOnlyRefuseAsDocumentedForMutatedBinaryBodies(@ForAll long seed) {
    Random r = new Random(seed);
    byte[] header = mutate(BINARY_HEADER.getBytes(StandardCharsets.UTF_8), r);
    byte[] data = new byte[r.nextInt(3) == 0 ? r.nextInt(64) : 32];
    r.nextBytes(data);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(header);
    out.writeBytes(data);
    byte[] body = out.toByteArray();
    String[] lengths = {String.valueOf(header.length), String.valueOf(r.nextInt(body.length + 10) - 5), "x", " 12 ", "99999999999"};
    String length = lengths[r.nextInt(3) == 0 ? r.nextInt(lengths.length) : 0];
    parsesOrRefuses(() -> {
      InferBody.Parsed parsed = InferBody.parse(body, length, SIG, SMALL);
      // What was accepted is exactly what the shape needs: the binary data was never trusted blindly.
      parsed.inputs().forEach(t -> assertThat(t.getData().remaining()).isEqualTo(
          t.getShape().stream().mapToLong(Long::longValue).reduce(1, Math::multiplyExact) * (t.getDatatype().equals("FP16") ? 2 : t.getDatatype().equals("INT64") ? 8 : 4)));
    });
  }

  @Property(tries = 400)
  void shouldTurnEveryMutatedJobLineIntoAnItemOrAnErrorItem(@ForAll long seed) {
    Random r = new Random(seed);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    int lines = 1 + r.nextInt(6);
    for (int i = 0; i < lines; i++) {
      body.writeBytes(mutate(VALID[r.nextInt(VALID.length)].getBytes(StandardCharsets.UTF_8), r));
      body.write('\n');
    }
    parsesOrRefuses(() -> {
      List<JobItem> items = JobLines.parse(body.toByteArray(), SIG, 100, SMALL);
      for (JobItem item : items) {
        assertThat(item.getError() != null || !item.getInputs().isEmpty()).isTrue();
        if (item.getError() != null) {
          assertThat(item.getError()).hasSizeLessThanOrEqualTo(Refusal.MAX_MESSAGE + 3);
        }
      }
    });
  }
}

package io.partita.gateway.oip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.Tensor;
import io.partita.gateway.refusal.Refusal;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class JsonTensorsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Tensor parse(String json) throws Exception {
    return JsonTensors.parse(JSON.readTree(json), 0);
  }

  @Test
  void shouldAcceptNestedDataAndWriteLittleEndian() throws Exception {
    Tensor t = parse("{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[2,2],\"data\":[[1,2],[3,4]]}");
    assertThat(t.getData().remaining()).isEqualTo(16);
    assertThat(t.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN).getFloat(12)).isEqualTo(4f);
    assertThat(JsonTensors.toJson(t).get("data").toString()).isEqualTo("[1.0,2.0,3.0,4.0]");
  }

  @Test
  void shouldCompareElementCountWithShapeBeforeAllocating() {
    assertThatThrownBy(() -> parse("{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[100000000000,1000],\"data\":[1]}"))
        .isInstanceOf(Refusal.class)
        .hasMessage("input 'x'.data: shape [100000000000, 1000] needs 100000000000000 elements, got 1");
  }

  @Test
  void shouldRefuseValuesOutsideTheDatatype() {
    assertThatThrownBy(() -> parse("{\"name\":\"x\",\"datatype\":\"UINT8\",\"shape\":[1],\"data\":[300]}"))
        .hasMessage("input 'x'.data[0]: expected a whole number between 0 and 255");
    assertThatThrownBy(() -> parse("{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[\"a\"]}"))
        .hasMessage("input 'x'.data[0]: expected a number");
  }

  /**
   * The gateway reads and writes numbers by Jackson's fast paths (JsonLimits.factory): every
   * FP32 value, written as the JDK writes it, must read back as the same float, and an answer must
   * write each float so that it reads back exactly, over random bit patterns (subnormals, extremes).
   */
  @Test
  void shouldReadAndWriteEveryFloatExactly() {
    java.util.Random random = new java.util.Random(42);
    int n = 20_000;
    float[] values = new float[n];
    StringBuilder json = new StringBuilder("{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[" + n + "],\"data\":[");
    for (int i = 0; i < n; i++) {
      float f;
      do {
        f = Float.intBitsToFloat(random.nextInt());
      } while (!Float.isFinite(f));
      values[i] = i == 0 ? Float.MIN_VALUE : i == 1 ? -Float.MAX_VALUE : f;
      json.append(i > 0 ? "," : "").append(values[i]);
    }
    json.append("]}");
    byte[] bytes = json.toString().getBytes(StandardCharsets.UTF_8);
    Tensor t = JsonTensors.parse(JsonLimits.DEFAULTS.read(bytes, 0, bytes.length, "body"), 0);
    java.nio.ByteBuffer data = t.getData().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < n; i++) {
      assertThat(data.getFloat(4 * i)).as("value %d read from %s", i, values[i]).isEqualTo(values[i]);
    }
    String written;
    try {
      written = new String(InferBody.JSON.writeValueAsBytes(JsonTensors.toJson(t).get("data")), StandardCharsets.UTF_8);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    String[] tokens = written.substring(1, written.length() - 1).split(",");
    assertThat(tokens).hasSize(n);
    for (int i = 0; i < n; i++) {
      assertThat(Float.parseFloat(tokens[i])).as("value %d written as %s", i, tokens[i]).isEqualTo(values[i]);
    }
  }
}

package io.partita.gateway.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.Tensor;
import java.nio.ByteOrder;
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
        .isInstanceOf(HttpError.class)
        .hasMessage("input 'x'.data: shape [100000000000, 1000] needs 100000000000000 elements, got 1");
  }

  @Test
  void shouldRefuseValuesOutsideTheDatatype() {
    assertThatThrownBy(() -> parse("{\"name\":\"x\",\"datatype\":\"UINT8\",\"shape\":[1],\"data\":[300]}"))
        .hasMessage("input 'x'.data[0]: expected a whole number between 0 and 255");
    assertThatThrownBy(() -> parse("{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[\"a\"]}"))
        .hasMessage("input 'x'.data[0]: expected a number");
  }
}

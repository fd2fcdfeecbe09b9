package io.partita.gateway.oip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.InferenceReply;
import io.partita.avro.Tensor;
import io.partita.gateway.refusal.Refusal;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class InferBodyTest {
  private static final ModelSignature SIG = new ModelSignature(
      List.of(TensorSpec.of("input", ElementType.FLOAT, -1, 8)), List.of(TensorSpec.of("output", ElementType.FLOAT, -1, 4)));

  static byte[] floats(float... values) {
    ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : values) {
      b.putFloat(v);
    }
    return b.array();
  }

  static byte[] binaryBody(String header, byte[] data) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(header.getBytes(StandardCharsets.UTF_8));
    out.writeBytes(data);
    return out.toByteArray();
  }

  @Test
  void shouldTakeBinaryInputsAfterTheJsonHeader() {
    String header = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"parameters\":{\"binary_data_size\":32}}],"
        + "\"outputs\":[{\"name\":\"output\",\"parameters\":{\"binary_data\":true}}]}";
    byte[] data = floats(1, 2, 3, 4, 5, 6, 7, 8);
    InferBody.Parsed parsed = InferBody.parse(binaryBody(header, data), String.valueOf(header.length()), SIG);
    Tensor t = parsed.inputs().get(0);
    byte[] got = new byte[t.getData().remaining()];
    t.getData().duplicate().get(got);
    assertThat(got).isEqualTo(data);
    assertThat(parsed.binary("output")).isTrue();
    assertThat(parsed.binaryAnswer()).isTrue();
  }

  @Test
  void shouldRefuseABinarySizeThatDisagreesWithTheShapeBeforeAllocating() {
    // A shape of 2^40 elements would be 4 TiB: the check compares counts and never allocates it.
    String header = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[137438953472,8],\"parameters\":{\"binary_data_size\":32}}]}";
    assertThatThrownBy(() -> InferBody.parse(binaryBody(header, floats(1, 2, 3, 4, 5, 6, 7, 8)), String.valueOf(header.length()), SIG))
        .isInstanceOf(Refusal.class)
        .hasMessageContaining("input 'input'.parameters.binary_data_size: shape [137438953472, 8] needs 1099511627776 FP32 elements");
  }

  @Test
  void shouldRefuseBinaryDataThatIsShortOrLeftOver() {
    String header = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"parameters\":{\"binary_data_size\":32}}]}";
    assertThatThrownBy(() -> InferBody.parse(binaryBody(header, floats(1, 2, 3)), String.valueOf(header.length()), SIG))
        .hasMessageContaining("only 12 bytes of binary data are left");
    assertThatThrownBy(() -> InferBody.parse(binaryBody(header, floats(1, 2, 3, 4, 5, 6, 7, 8, 9)), String.valueOf(header.length()), SIG))
        .hasMessageContaining("4 bytes of binary data are left over");
  }

  @Test
  void shouldRefuseBadHeaderLengthsAndBinaryWithoutTheHeader() {
    String header = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"parameters\":{\"binary_data_size\":32}}]}";
    byte[] body = binaryBody(header, floats(1, 2, 3, 4, 5, 6, 7, 8));
    assertThatThrownBy(() -> InferBody.parse(body, "99999", SIG)).hasMessageContaining("Inference-Header-Content-Length");
    assertThatThrownBy(() -> InferBody.parse(body, "x", SIG)).hasMessageContaining("not a whole number");
    assertThatThrownBy(() -> InferBody.parse(header.getBytes(StandardCharsets.UTF_8), null, SIG))
        .hasMessageContaining("needs the Inference-Header-Content-Length header");
  }

  @Test
  void shouldParseJsonRequestsWithTheirParameters() {
    String json = "{\"id\":\"r1\",\"parameters\":{\"timeout_ms\":500,\"binary_data_output\":true},"
        + "\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}";
    InferBody.Parsed parsed = InferBody.parse(json.getBytes(StandardCharsets.UTF_8), null, SIG);
    assertThat(parsed.clientId()).isEqualTo("r1");
    assertThat(parsed.timeoutMs()).isEqualTo(500L);
    assertThat(parsed.allOutputsBinary()).isTrue();
    assertThatThrownBy(() -> InferBody.parse("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}],\"outputs\":[{\"name\":\"nope\"}]}"
        .getBytes(StandardCharsets.UTF_8), null, SIG)).hasMessageContaining("outputs[0].name: unknown output 'nope'");
  }

  @Test
  void shouldAnswerBinaryOutputsAfterTheJsonHeader() throws Exception {
    byte[] raw = floats(0.5f, 1.5f, 2.5f, 3.5f);
    InferenceReply reply = InferenceReply.newBuilder().setId("r").setServiceModel("demo").setModelVersion("1")
        .setOutputs(List.of(Tensor.newBuilder().setName("output").setDatatype("FP32").setShape(List.of(1L, 4L)).setData(ByteBuffer.wrap(raw)).build()))
        .build();
    InferBody.Parsed parsed = new InferBody.Parsed(List.of(), List.of(), java.util.Set.of("output"), false, null, "mine");
    InferAnswer answer = InferAnswer.of(reply, "mine", parsed);
    assertThat(answer.binary()).isTrue();
    String header = new String(answer.body(), 0, answer.headerLength(), StandardCharsets.UTF_8);
    assertThat(header).contains("\"binary_data_size\":16").contains("\"id\":\"mine\"").doesNotContain("\"data\"");
    assertThat(Arrays.copyOfRange(answer.body(), answer.headerLength(), answer.body().length)).isEqualTo(raw);
    InferAnswer json = InferAnswer.of(reply, null, null);
    assertThat(json.binary()).isFalse();
    assertThat(new String(json.body(), StandardCharsets.UTF_8)).contains("\"data\":[0.5,1.5,2.5,3.5]");
  }
}

package io.partita.gateway.oip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.avro.JobItem;
import io.partita.gateway.jobs.JobLines;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import io.partita.gateway.server.HttpStatus;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.TensorSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hardening findings: JSON limits, out-of-range floats and long names, without HTTP or Kafka. */
class InputLimitsTest {
  private static final ModelSignature SIG = new ModelSignature(
      List.of(TensorSpec.of("input", ElementType.FLOAT, -1, 8)), List.of(TensorSpec.of("output", ElementType.FLOAT, -1, 4)));
  private static final ObjectMapper JSON = new ObjectMapper();

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void shouldAnswer400NamingTheLimitWhenAnInferBodyNestsTooDeep() {
    // Before: Jackson's own limit (1,000) raised an exception with no location, and the gateway answered 500.
    assertThatThrownBy(() -> InferBody.parse(bytes("[".repeat(1001)), null, SIG, JsonLimits.DEFAULTS))
        .isInstanceOf(Refusal.class)
        .satisfies(e -> assertThat(HttpStatus.of(((Refusal) e).kind())).isEqualTo(400))
        .hasMessageContaining("nested deeper than the limit of 64 levels (gateway.json.max.depth)");
    assertThatThrownBy(() -> InferBody.parse(bytes("[".repeat(1001)), null, SIG))
        .hasMessageContaining("gateway.json.max.depth");
  }

  @Test
  void shouldAnswer400NamingTheLimitWhenABinaryBodysJsonHeaderNestsTooDeep() {
    byte[] body = bytes("[".repeat(100) + "xxxxxxxx");
    assertThatThrownBy(() -> InferBody.parse(body, "100", SIG, JsonLimits.DEFAULTS))
        .hasMessageContaining("gateway.json.max.depth");
  }

  @Test
  void shouldTurnAJobLineThatNestsTooDeepIntoAnErrorItemNamingTheLimit() {
    String good = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,8],\"data\":[1,2,3,4,5,6,7,8]}]}";
    List<JobItem> items = JobLines.parse(bytes(good + "\n" + "[".repeat(1001) + "\n" + good), SIG, 10, JsonLimits.DEFAULTS);
    assertThat(items).hasSize(3);
    assertThat(items.get(0).getError()).isNull();
    assertThat(items.get(1).getError()).startsWith("line: ").contains("gateway.json.max.depth");
    assertThat(items.get(2).getError()).isNull();
  }

  @Test
  void shouldAnswer400NamingTheLimitForLongStringsNumbersAndDocuments() {
    JsonLimits small = new JsonLimits(8, 300, 40, 2000);
    assertThatThrownBy(() -> small.read(bytes("{\"id\":\"" + "x".repeat(301) + "\"}"), 0, 310, "body"))
        .hasMessage("body: a JSON string longer than the limit of 300 characters (gateway.json.max.string.length)");
    assertThatThrownBy(() -> small.read(bytes("{\"" + "k".repeat(301) + "\":1}"), 0, 307, "body"))
        .hasMessageContaining("gateway.json.max.string.length");
    String longNumber = "{\"n\":" + "1".repeat(41) + "}";
    assertThatThrownBy(() -> small.read(bytes(longNumber), 0, longNumber.length(), "body"))
        .hasMessage("body: a JSON number longer than the limit of 40 characters (gateway.json.max.number.length)");
    String big = "[" + "1,".repeat(1500) + "1]";
    assertThatThrownBy(() -> small.read(bytes(big), 0, big.length(), "line"))
        .hasMessage("line: JSON longer than the limit of 2000 bytes (gateway.json.max.document.bytes)");
    assertThatThrownBy(() -> small.read(bytes("{\"a\":"), 0, 5, "body"))
        .hasMessageStartingWith("body: not valid JSON (line 1, column");
  }

  @Test
  void shouldAnswer400NamingTheElementWhenAFloatIsOutOfItsDatatypesRange() throws Exception {
    // Before: 1e39 became +Inf as FP32 and the outputs came back NaN.
    assertThatThrownBy(() -> JsonTensors.parse(JSON.readTree(
        "{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1,2,3,1e39]}"), 0))
        .isInstanceOf(Refusal.class)
        .hasMessage("input 'input'.data[3]: 1.0E39 is out of the FP32 range (largest magnitude 3.4028235E38)");
    assertThatThrownBy(() -> JsonTensors.parse(JSON.readTree(
        "{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[2],\"data\":[-1e39,0]}"), 0))
        .hasMessageContaining("data[0]").hasMessageContaining("FP32 range");
    assertThatThrownBy(() -> JsonTensors.parse(JSON.readTree(
        "{\"name\":\"h\",\"datatype\":\"FP16\",\"shape\":[2],\"data\":[1,70000]}"), 0))
        .hasMessageContaining("input 'h'.data[1]").hasMessageContaining("FP16 range");
    assertThatThrownBy(() -> JsonTensors.parse(JSON.readTree(
        "{\"name\":\"d\",\"datatype\":\"FP64\",\"shape\":[1],\"data\":[1e400]}"), 0))
        .hasMessageContaining("input 'd'.data[0]").hasMessageContaining("FP64 range");
  }

  @Test
  void shouldKeepFloatsAtTheEdgeOfTheirRange() throws Exception {
    assertThat(JsonTensors.parse(JSON.readTree(
        "{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[3],\"data\":[3.4028235e38,-3.4028235e38,1e-50]}"), 0).getData().remaining())
        .isEqualTo(12);
    assertThat(JsonTensors.parse(JSON.readTree(
        "{\"name\":\"h\",\"datatype\":\"FP16\",\"shape\":[2],\"data\":[65504,-65504]}"), 0).getData().remaining()).isEqualTo(4);
  }

  @Test
  void shouldCutLongNamesEchoedInErrors() throws Exception {
    String name = "n".repeat(100_000);
    assertThat(SafeText.name(name)).isEqualTo("n".repeat(64) + "...(100000 characters)");
    assertThat(SafeText.name("a\nb\u0000c")).isEqualTo("a?b?c");
    assertThatThrownBy(() -> JsonTensors.parse(JSON.readTree(
        "{\"name\":\"" + name + "\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[\"x\"]}"), 0))
        .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200).contains("(100000 characters)"));
    assertThatThrownBy(() -> JsonTensors.parse(JSON.readTree(
        "{\"name\":\"x\",\"datatype\":\"" + name + "\",\"shape\":[1],\"data\":[1]}"), 0))
        .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(200));
    assertThat(new Refusal(Kind.BAD_INPUT, "x".repeat(100_000)).getMessage()).hasSize(Refusal.MAX_MESSAGE + 3);
  }
}

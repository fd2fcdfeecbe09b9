package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.partita.models.demo.DemoMlp;
import java.util.List;

/** Job inputs of distinct rows, and the check that a result line is the reference answer of its row. */
final class JobLinesFixture {
  static final ObjectMapper JSON = new ObjectMapper();

  private JobLinesFixture() {}

  static String line(float[] row) {
    return TestHttp.inferBody(row);
  }

  static String lines(float[][] rows) {
    StringBuilder b = new StringBuilder();
    for (float[] row : rows) {
      b.append(line(row)).append('\n');
    }
    return b.toString();
  }

  /** Asserts that {@code line} is the successful result of input {@code index} for the service model. */
  static void assertResult(JsonNode line, int index, float[] row, String serviceModel) {
    assertThat(line.get("index").asInt()).isEqualTo(index);
    assertThat(line.has("error")).as("line %d: %s", index, line).isFalse();
    String version = line.get("model_version").asText();
    float[][] expected = DemoMlp.reference(new float[][] {row}, DemoMlp.adapterForServiceModel(serviceModel).orElse(null), version);
    JsonNode data = line.get("outputs").get(0).get("data");
    for (int i = 0; i < DemoMlp.OUTPUT_SIZE; i++) {
      assertThat(data.get(i).floatValue()).as("line %d [%d]", index, i).isCloseTo(expected[0][i], within(1e-4f));
    }
  }

  static List<JsonNode> parseLines(String body) {
    return body.lines().filter(l -> !l.isBlank()).map(l -> {
      try {
        return JSON.readTree(l);
      } catch (Exception e) {
        throw new AssertionError("not a JSON line: " + l, e);
      }
    }).toList();
  }
}

package io.partita.models.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.models.repo.ElementType;
import io.partita.models.repo.TensorSpec;
import io.partita.models.tensor.TensorValidator.Sent;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TensorValidatorTest {
  private final Map<String, TensorSpec> specs = new LinkedHashMap<>();

  TensorValidatorTest() {
    specs.put("input", TensorSpec.of("input", ElementType.FLOAT, -1, 8));
    specs.put("mask", TensorSpec.of("mask", ElementType.INT64, -1, 8));
  }

  private static Sent sent(String name, String type, long rows, long cols, long bytes) {
    return new Sent(name, type, List.of(rows, cols), bytes);
  }

  @Test
  void shouldAcceptInputsThatFit() {
    assertThat(TensorValidator.check(specs, List.of(sent("input", "FP32", 2, 8, 64), sent("mask", "INT64", 2, 8, 128)))).isNull();
  }

  @Test
  void shouldNameEachProblem() {
    assertThat(TensorValidator.check(specs, List.of(sent("input", "FP32", 2, 8, 64))))
        .isEqualTo("input 'mask': missing");
    assertThat(TensorValidator.check(specs, List.of(sent("other", "FP32", 2, 8, 64))))
        .startsWith("input 'other': unknown input");
    assertThat(TensorValidator.check(specs, List.of(sent("input", "FP64", 2, 8, 128), sent("mask", "INT64", 2, 8, 128))))
        .isEqualTo("input 'input'.datatype: expected FP32, got FP64");
    assertThat(TensorValidator.check(specs, List.of(sent("input", "WAT", 2, 8, 64))))
        .isEqualTo("input 'input'.datatype: 'WAT' is not a known datatype");
    assertThat(TensorValidator.check(specs, List.of(sent("input", "FP32", 2, 7, 56), sent("mask", "INT64", 2, 8, 128))))
        .isEqualTo("input 'input'.shape[1]: expected 8, got 7");
    assertThat(TensorValidator.check(specs, List.of(sent("input", "FP32", 2, 8, 60), sent("mask", "INT64", 2, 8, 128))))
        .isEqualTo("input 'input'.data: shape [2, 8] needs 16 FP32 elements (64 bytes), got 60 bytes");
    assertThat(TensorValidator.check(specs, List.of(sent("input", "FP32", 2, 8, 64), sent("mask", "INT64", 3, 8, 192))))
        .isEqualTo("input 'mask'.shape[0]: batch size 3 differs from the other inputs' 2");
    assertThat(TensorValidator.check(specs, List.of(sent("input", "FP32", 2, 8, 64), sent("input", "FP32", 2, 8, 64))))
        .isEqualTo("input 'input': sent twice");
  }

  @Test
  void shouldRefuseShapesWhoseElementCountOverflowsWithoutAllocating() {
    Map<String, TensorSpec> any = Map.of("x", TensorSpec.of("x", ElementType.FLOAT, -1, -1));
    assertThat(TensorValidator.check(any, List.of(new Sent("x", "FP32", List.of(1L << 40, 1L << 40), 16))))
        .isEqualTo("input 'x'.shape: too many elements");
    assertThat(TensorValidator.check(any, List.of(new Sent("x", "FP32", List.of(-1L, 4L), 16))))
        .isEqualTo("input 'x'.shape[0]: must not be negative, got -1");
  }
}

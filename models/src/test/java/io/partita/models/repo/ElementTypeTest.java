package io.partita.models.repo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ElementTypeTest {

  @Test
  void shouldMapOnnxAndOipNames() {
    assertThat(ElementType.fromOnnxDataType(1)).isEqualTo(ElementType.FLOAT);
    assertThat(ElementType.fromOnnxDataType(7)).isEqualTo(ElementType.INT64);
    assertThat(ElementType.fromOnnxDataType(10)).isEqualTo(ElementType.FLOAT16);
    assertThat(ElementType.fromOnnxDataType(99)).isEqualTo(ElementType.OTHER);
    assertThat(ElementType.fromOipDatatype("FP32")).hasValue(ElementType.FLOAT);
    assertThat(ElementType.fromOipDatatype("BYTES")).hasValue(ElementType.STRING);
    assertThat(ElementType.fromOipDatatype("fp32")).isEmpty();
    assertThat(ElementType.fromOipDatatype("")).isEmpty();
    assertThat(ElementType.FLOAT16.byteSize()).isEqualTo(2);
  }

  @Test
  void shouldAcceptConcreteShapesThatFitDynamicOnes() {
    TensorSpec spec = TensorSpec.of("x", ElementType.FLOAT, -1, 8);
    assertThat(spec.accepts(new long[] {3, 8})).isTrue();
    assertThat(spec.accepts(new long[] {0, 8})).isTrue();
    assertThat(spec.accepts(new long[] {3, 7})).isFalse();
    assertThat(spec.accepts(new long[] {8})).isFalse();
    assertThat(spec.accepts(new long[] {-1, 8})).isFalse();
  }
}

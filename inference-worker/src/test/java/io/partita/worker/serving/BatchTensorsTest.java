package io.partita.worker.serving;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.Tensor;
import io.partita.worker.WorkerFixtures;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchTensorsTest {

  @Test
  void shouldStackRequestsAndSplitTheOutputBackInOrder() {
    Tensor a = WorkerFixtures.floats("x", new float[][] {{1, 2, 3}});
    Tensor b = WorkerFixtures.floats("x", new float[][] {{4, 5, 6}, {7, 8, 9}});
    assertThat(BatchTensors.stackedShape(List.of(a, b))).containsExactly(3, 3);

    ByteBuffer stacked = ByteBuffer.allocate(36);
    BatchTensors.data(List.of(a, b)).forEach(stacked::put);
    stacked.flip();
    Tensor batched = Tensor.newBuilder(a).setShape(List.of(3L, 3L)).setData(stacked).build();

    List<Tensor> parts = BatchTensors.split(batched, new int[] {1, 2});
    assertThat(WorkerFixtures.toRows(parts.get(0))).isDeepEqualTo(new float[][] {{1, 2, 3}});
    assertThat(WorkerFixtures.toRows(parts.get(1))).isDeepEqualTo(new float[][] {{4, 5, 6}, {7, 8, 9}});
    assertThat(parts.get(1).getShape()).containsExactly(2L, 3L);
    assertThat(parts.get(1).getData().remaining()).isEqualTo(24);
  }

  @Test
  void shouldRefuseToSplitAnOutputThatDoesNotFollowTheBatch() {
    Tensor pooled = WorkerFixtures.floats("y", new float[][] {{1, 2}});
    assertThatThrownBy(() -> BatchTensors.split(pooled, new int[] {1, 1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("output 'y'");
  }
}

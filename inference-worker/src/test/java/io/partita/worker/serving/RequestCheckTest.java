package io.partita.worker.serving;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.avro.InferenceRequest;
import io.partita.models.demo.DemoMlp;
import io.partita.models.repo.ElementType;
import io.partita.models.repo.ModelSignature;
import io.partita.models.repo.Precision;
import io.partita.models.repo.RepositoryIndex;
import io.partita.models.repo.TensorSpec;
import io.partita.models.repo.VersionEntry;
import io.partita.worker.WorkerFixtures;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RequestCheckTest {
  @TempDir Path repo;
  private VersionEntry v1;

  @BeforeEach
  void setUp() throws Exception {
    RepositoryIndex index = WorkerFixtures.demoRepository(repo);
    v1 = index.models().get(DemoMlp.MODEL_NAME).version("1").orElseThrow();
  }

  @Test
  void shouldNameTheFieldOfABadInput() {
    InferenceRequest r = WorkerFixtures.request("r", "demo", new float[][] {{1f, 2f, 3f}});
    assertThat(RequestCheck.problem(v1, r)).hasValueSatisfying(p -> assertThat(p).contains("input 'input'.shape[1]"));
    r = WorkerFixtures.request("r", "demo", DemoMlp.sampleInput(2, 1));
    r.setOutputs(List.of("nope"));
    assertThat(RequestCheck.problem(v1, r)).hasValueSatisfying(p -> assertThat(p).contains("output 'nope'"));
  }

  @Test
  void shouldBatchRequestsOfTheSameLayoutWhateverTheirRows() {
    RequestCheck.Batching one = RequestCheck.batching(v1, WorkerFixtures.request("a", "demo", DemoMlp.sampleInput(1, 1)));
    RequestCheck.Batching five = RequestCheck.batching(v1, WorkerFixtures.request("b", "demo", DemoMlp.sampleInput(5, 2)));
    assertThat(one.rows()).isEqualTo(1);
    assertThat(five.rows()).isEqualTo(5);
    assertThat(one.layout()).isNotNull().isEqualTo(five.layout());

    InferenceRequest withOutputs = WorkerFixtures.request("c", "demo", DemoMlp.sampleInput(1, 1));
    withOutputs.setOutputs(List.of(DemoMlp.OUTPUT));
    assertThat(RequestCheck.batching(v1, withOutputs).layout()).isNotEqualTo(one.layout());
  }

  @Test
  void shouldRunAloneOnAModelWithAFixedLeadingDimension() {
    ModelSignature fixed = new ModelSignature(
        List.of(TensorSpec.of("input", ElementType.FLOAT, 1, 8)), List.of(TensorSpec.of("output", ElementType.FLOAT, 1, 4)));
    VersionEntry v = new VersionEntry("m", "1", v1.modelFile(), "m/1/model.onnx", v1.sha256(), Precision.FP32, List.of("CPU"),
        OptionalDouble.empty(), OptionalLong.empty(), fixed);
    assertThat(RequestCheck.batchable(v)).isFalse();
    assertThat(RequestCheck.batching(v, WorkerFixtures.request("a", "m", DemoMlp.sampleInput(1, 1))).layout()).isNull();
    assertThat(RequestCheck.batchable(v1)).isTrue();
  }
}

package io.partita.profiler.measure;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.onnx.TestModels;
import io.partita.profiler.stats.Sampler;
import io.partita.profiler.stats.StabilityRule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real ONNX Runtime sessions on this machine, with small budgets; assertions are about structure, never speed. */
class MeasurerTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();
  private static ProbedHost host;
  private static Measurer measurer;
  private static final ModelRef MATMUL = ModelRef.ofBytes("matmul", "1", TestModels.matMul(-1, 64, 64));

  @BeforeAll
  static void probeHost() {
    HostProbe probe = HostProbe.live();
    host = probe.probe(probe.hostname(), ProviderProbe.probe(ENV));
    Sampler.Settings fast = new Sampler.Settings(2, 100_000_000L, 1_000_000, StabilityRule.DEFAULT, true, 100);
    measurer = new Measurer(ENV, host, new Measurer.Settings(fast, Map.of("L", 16L),
        io.partita.profiler.env.CommandRunner.processes(), false, true));
  }

  private static void assertSane(TimingResult r) {
    assertThat(r.ok()).as(r.error() == null ? "ok" : r.error()).isTrue();
    assertThat(r.error()).isNull();
    assertThat(r.samples()).isPositive();
    assertThat(r.p50Ms()).isPositive();
    assertThat(r.p50Ms()).isLessThanOrEqualTo(r.p90Ms());
    assertThat(r.p90Ms()).isLessThanOrEqualTo(r.p99Ms());
    assertThat(r.meanMs()).isPositive();
    assertThat(r.throughput()).isPositive();
    assertThat(r.host()).isEqualTo(host.hostId());
  }

  @Test
  void shouldMeasureEveryRequestedSizeAndBatchInOrder() {
    List<String> progress = new ArrayList<>();
    ProgressListener listener = new ProgressListener() {
      @Override
      public void starting(int index, int total, String label) {
        progress.add(index + "/" + total + " " + label);
      }

      @Override
      public void finished(int index, int total, String label, boolean ok) {}
    };
    List<TimingResult> results = measurer.measure(
        new Measurer.Request(MATMUL, List.of(1), List.of(1, 8), List.of(Provider.CPU)), listener);
    assertThat(results).extracting(TimingResult::batch).containsExactly(1, 8);
    assertThat(results).allSatisfy(MeasurerTest::assertSane);
    assertThat(results).allSatisfy(r -> {
      assertThat(r.pool()).isEqualTo("cpu");
      assertThat(r.provider()).isEqualTo("CPU");
      assertThat(r.model()).isEqualTo("matmul");
      assertThat(r.version()).isEqualTo("1");
    });
    assertThat(progress).containsExactly("0/2 CPU size=1 batch=1", "1/2 CPU size=1 batch=8");
  }

  @Test
  void shouldPinAPartitionOfEveryUsableCore() {
    TimingResult r = measurer.measurePoint(MATMUL, Provider.CPU, host.usableCores(), 4);
    assertSane(r);
    assertThat(r.size()).isEqualTo(host.usableCores());
    assertThat(r.pinned()).isEqualTo(Files.isExecutable(Path.of("/usr/bin/taskset")));
  }

  @Test
  void shouldDefaultToPowersOfTwoPlusTheUsableCount() {
    List<Integer> sizes = measurer.defaultSizes(Provider.CPU);
    assertThat(sizes).startsWith(1).endsWith(host.usableCores()).doesNotHaveDuplicates().isSorted();
    assertThat(measurer.defaultBatches(MATMUL)).containsExactly(1, 2, 4, 8, 16, 32);
  }

  @Test
  void shouldHonourAModelsFixedBatchAndFailOtherBatchesWithTheReason() {
    ModelRef fixed = ModelRef.ofBytes("fixed", "1", TestModels.matMul(4, 8, 8));
    assertThat(measurer.defaultBatches(fixed)).containsExactly(4);
    assertSane(measurer.measurePoint(fixed, Provider.CPU, 1, 4));
    TimingResult wrong = measurer.measurePoint(fixed, Provider.CPU, 1, 8);
    assertThat(wrong.ok()).isFalse();
    assertThat(wrong.error()).contains("fixed batch dimension of 4");
    assertThat(wrong.samples()).isZero();
    assertThat(wrong.p50Ms()).isNaN();
  }

  @Test
  void shouldFailAPartitionLargerThanTheUsableCores() {
    TimingResult r = measurer.measurePoint(MATMUL, Provider.CPU, host.usableCores() + 1, 1);
    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("usable");
  }

  @Test
  void shouldRecordCudaAsAFailedMeasurementWhereItDoesNotLoad() {
    TimingResult r = measurer.measurePoint(MATMUL, Provider.CUDA, 1, 1);
    assertThat(r.pool()).isEqualTo("gpu");
    if (!host.executionProviders().contains("CUDA")) {
      assertThat(r.ok()).isFalse();
      assertThat(r.error()).isNotBlank();
    } else {
      assertSane(r);
    }
  }

  @Test
  void shouldReportAModelThatCannotBeOpenedAsAFailedMeasurement(@TempDir Path dir) throws Exception {
    Path broken = Files.write(dir.resolve("model.onnx"), new byte[] {0x08, 0x01, 0x7f});
    TimingResult r = measurer.measurePoint(ModelRef.ofFile("broken", "1", broken), Provider.CPU, 1, 1);
    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("OrtException");
  }

  @Test
  void shouldFeedNamedDynamicDimensionsAndNameTheMissingOnes() {
    ModelRef relu = ModelRef.ofBytes("relu", "1", TestModels.reluWithDynamicLength());
    assertSane(measurer.measurePoint(relu, Provider.CPU, 1, 2));
    Measurer noDims = new Measurer(ENV, host, new Measurer.Settings(
        Sampler.Settings.ofBudgetMillis(50), Map.of(), io.partita.profiler.env.CommandRunner.processes(), false, true));
    TimingResult r = noDims.measurePoint(relu, Provider.CPU, 1, 2);
    assertThat(r.ok()).isFalse();
    assertThat(r.error()).contains("'L'").contains("--dim L=SIZE");
  }

  @Test
  void shouldMeasureTheWholeCoresAsOnePartitionAndAsOnePartitionPerCore() {
    // the grouping-mode example: on 2 cores, {2} and {1,1}
    GroupingResult whole = measurer.measureGrouping(MATMUL, Provider.CPU, List.of(2), 8);
    GroupingResult split = measurer.measureGrouping(MATMUL, Provider.CPU, List.of(1, 1), 8);
    if (host.usableCores() < 2) {
      assertThat(whole.ok()).isFalse();
      assertThat(split.error()).contains("usable");
      return;
    }
    for (GroupingResult g : List.of(whole, split)) {
      assertThat(g.ok()).as(String.valueOf(g.error())).isTrue();
      assertThat(g.partitions()).extracting(TimingResult::size).containsExactlyElementsOf(g.sizes());
      assertThat(g.partitions()).allSatisfy(MeasurerTest::assertSane);
      assertThat(g.aggregateThroughput())
          .isCloseTo(g.partitions().stream().mapToDouble(TimingResult::throughput).sum(), org.assertj.core.data.Offset.offset(1e-6));
    }
    assertThat(split.partitions()).hasSize(2);
  }

  @Test
  void shouldLayOutPartitionsOnDistinctCores() {
    if (host.usableCores() < 2) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> measurer.layout(Provider.CPU, List.of(1, 1)))
          .hasMessageContaining("usable");
      return;
    }
    List<List<io.partita.runtime.SlotConfig>> layout = measurer.layout(Provider.CPU, List.of(1, 1));
    assertThat(layout.get(0).get(0).cpus()).containsExactly(host.usableCpuIds().get(0));
    assertThat(layout.get(1).get(0).cpus()).containsExactly(host.usableCpuIds().get(1));
  }

  @Test
  void shouldFailAGroupingThatDoesNotFit() {
    GroupingResult g = measurer.measureGrouping(MATMUL, Provider.CPU, List.of(host.usableCores(), 1), 1);
    assertThat(g.ok()).isFalse();
    assertThat(g.error()).contains("need " + (host.usableCores() + 1) + " cores");
    assertThat(g.partitions()).isEmpty();
  }
}

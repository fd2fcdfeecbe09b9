package io.partita.profiler.measure;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.onnx.TestModels;
import io.partita.profiler.stats.Sampler;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InstanceMemoryTest {

  private static final long MIB = 1024 * 1024;

  @Test
  void shouldReadTheChildsFigureAndNothingElse() {
    assertThat(InstanceMemory.parse("some warning\ninstance-memory-bytes=123\n")).isEqualTo(123);
    assertThat(InstanceMemory.parse("Exception in thread main")).isEqualTo(-1);
  }

  @Test
  void shouldCountAtLeastTheWeightsOfAnInstanceAndMoreForABiggerModel() {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    HostProbe probe = HostProbe.live();
    ProbedHost host = probe.probe(probe.hostname(), ProviderProbe.probe(env));
    Measurer measurer = new Measurer(env, host, new Measurer.Settings(Sampler.Settings.ofBudgetMillis(30), Map.of(),
        CommandRunner.processes(), true, true));
    ModelRef small = ModelRef.ofBytes("small", "1", TestModels.matMul(-1, 16, 16));
    ModelRef big = ModelRef.ofBytes("big", "1", TestModels.matMul(-1, 1024, 1024)); // 4 MiB of weights

    TimingResult smallResult = measurer.measurePoint(small, Provider.CPU, 1, 1);
    TimingResult bigResult = measurer.measurePoint(big, Provider.CPU, 1, 1);

    assertThat(bigResult.ok()).isTrue();
    assertThat(bigResult.memoryBytes()).isGreaterThanOrEqualTo(4 * MIB).isLessThan(1024 * MIB);
    assertThat(smallResult.memoryBytes()).isNotNegative().isLessThan(bigResult.memoryBytes());
  }

  @Test
  void shouldAddUpAGroupingsMemoryFromItsPartitions() {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    HostProbe probe = HostProbe.live();
    ProbedHost host = probe.probe(probe.hostname(), ProviderProbe.probe(env));
    Measurer measurer = new Measurer(env, host, new Measurer.Settings(Sampler.Settings.ofBudgetMillis(30), Map.of(),
        CommandRunner.processes(), true, true));
    ModelRef model = ModelRef.ofBytes("m", "1", TestModels.matMul(-1, 256, 256));
    List<Integer> grouping = host.usableCores() >= 2 ? List.of(1, 1) : List.of(1);
    GroupingResult g = measurer.measureGrouping(model, Provider.CPU, grouping, 2);
    assertThat(g.ok()).isTrue();
    assertThat(g.memoryBytes()).isPositive()
        .isEqualTo(g.partitions().stream().mapToLong(TimingResult::memoryBytes).sum());
  }
}

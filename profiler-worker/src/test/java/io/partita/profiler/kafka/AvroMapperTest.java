package io.partita.profiler.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.HostEnvironment;
import io.partita.avro.ProfileRequest;
import io.partita.avro.TimingEvent;
import io.partita.common.serde.Codecs;
import io.partita.common.serde.RecordCodec;
import io.partita.profiler.env.BaselineScore;
import io.partita.profiler.env.Gpu;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.idle.MeasuringCondition;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.run.ProfileSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class AvroMapperTest {

  private static TimingResult point(int size, double p50, double p99, double throughput, boolean stable) {
    return new TimingResult(new TimingResult.Point("m", "1", "h1", "cpu", size, 8, "CPU"),
        new TimingResult.Latency(p50, p50 * 1.1, p99, p50, 100), throughput, 1000,
        new TimingResult.Outcome(stable, true, true, null));
  }

  @Test
  void shouldMapAPointAndKeyIt() {
    TimingEvent e = AvroMapper.timing(point(2, 1.5, 3.0, 500, true), "r1", 42);

    assertThat(AvroMapper.timingKey(e)).isEqualTo("m/1/h1/cpu/2/8");
    assertThat(e.getGrouping()).isEmpty();
    assertThat(e.getP50Ms()).isEqualTo(1.5);
    assertThat(e.getRequestId()).isEqualTo("r1");
    assertThat(e.getTimestamp()).isEqualTo(42);
    RecordCodec<TimingEvent> codec = Codecs.singleObject().codec(TimingEvent.class);
    assertThat(codec.decode("t", codec.encode("t", e))).isEqualTo(e);
  }

  @Test
  void shouldRecordTheConditionAPointOrGroupingWasMeasuredUnderAndUncheckedWhenNotGiven() {
    GroupingResult g = new GroupingResult(new GroupingResult.Grouping("m", "1", "h1", "cpu", List.of(1, 1), 8, "CPU"),
        List.of(point(1, 1.0, 2.0, 300, true), point(1, 1.2, 2.5, 280, true)), 580, 2000, true, null);

    assertThat(AvroMapper.timing(point(1, 1, 2, 3, true), "r1", MeasuringCondition.IDLE, 1).getCondition()).isEqualTo("IDLE");
    assertThat(AvroMapper.timing(g, "r1", MeasuringCondition.BUSY_AFTER_WAIT, 1).getCondition())
        .isEqualTo("BUSY_AFTER_WAIT");
    assertThat(AvroMapper.timing(point(1, 1, 2, 3, true), "cli-1", 1).getCondition()).isEqualTo("UNCHECKED");
    RecordCodec<TimingEvent> codec = Codecs.singleObject().codec(TimingEvent.class);
    TimingEvent spare = AvroMapper.timing(g, "r1", MeasuringCondition.NO_SERVING, 1);
    assertThat(codec.decode("t", codec.encode("t", spare)).getCondition()).isEqualTo("NO_SERVING");
  }

  @Test
  void shouldMapAGroupingToOneEventWithTheAggregateAndTheSlowestPartitionsLatencies() {
    GroupingResult g = new GroupingResult(new GroupingResult.Grouping("m", "1", "h1", "cpu", List.of(1, 1), 8, "CPU"),
        List.of(point(1, 1.0, 2.0, 300, true), point(1, 1.2, 2.5, 280, false)), 580, 2000, true, null);

    TimingEvent e = AvroMapper.timing(g, null, 1);

    assertThat(AvroMapper.timingKey(e)).isEqualTo("m/1/h1/cpu/2/8/g1+1");
    assertThat(e.getSize()).isEqualTo(2);
    assertThat(e.getGrouping()).containsExactly(1, 1);
    assertThat(e.getThroughput()).isEqualTo(580);
    assertThat(e.getP50Ms()).isEqualTo(1.2);
    assertThat(e.getP99Ms()).isEqualTo(2.5);
    assertThat(e.getSamples()).isEqualTo(200);
    assertThat(e.getMemoryBytes()).isEqualTo(2000);
    assertThat(e.getStable()).isFalse();
    assertThat(e.getOk()).isTrue();
  }

  @Test
  void shouldMapAFailedGroupingWithItsErrorAndNoNumbers() {
    GroupingResult g = new GroupingResult(new GroupingResult.Grouping("m", "1", "h1", "cpu", List.of(4, 4), 1, "CPU"), List.of(), 0, -1, false,
        "partitions [4, 4] need 8 cores; 2 usable");

    TimingEvent e = AvroMapper.timing(g, "r", 1);

    assertThat(e.getOk()).isFalse();
    assertThat(e.getError()).contains("8 cores");
    assertThat(e.getP50Ms()).isNaN();
    assertThat(e.getThroughput()).isZero();
    assertThat(AvroMapper.timingKey(e)).isEqualTo("m/1/h1/cpu/8/1/g4+4");
  }

  @Test
  void shouldMapTheEnvironmentWithGpusAndBaseline() {
    ProbedHost env = new ProbedHost("h1", "Xeon", List.of("avx2"), 4, 2, 2, List.of(0, 1), 2.0, 1L << 30,
        null, List.of(new Gpu(0, "H200", 1L << 40, "9.0")), "1.29.0", List.of("CPU", "CUDA"), "Linux", "6.1",
        "amd64", "17", new BaselineScore(1000, 2, 64, 9, 80, "ref"));

    HostEnvironment a = AvroMapper.environment(env, 7);

    assertThat(a.getUsableCpuIds()).containsExactly(0, 1);
    assertThat(a.getCpuQuotaCores()).isEqualTo(2.0);
    assertThat(a.getMemoryLimitBytes()).isNull();
    assertThat(a.getGpus()).singleElement().satisfies(g -> {
      assertThat(g.getName()).isEqualTo("H200");
      assertThat(g.getComputeCapability()).isEqualTo("9.0");
    });
    assertThat(a.getBaseline().getThroughput()).isEqualTo(1000);
    assertThat(a.getBaseline().getPointsMeasured()).isEqualTo(9);
    assertThat(AvroMapper.environment(env.withBaseline(null), 7).getBaseline()).isNull();
  }

  private static ProfileRequest.Builder request() {
    return ProfileRequest.newBuilder().setRequestId("r").setHost("*").setModel("m");
  }

  @Test
  void shouldTurnARequestIntoASpecWithDefaults() {
    ProfileSpec spec = AvroMapper.spec(request().build(), 2000);

    assertThat(spec.version()).isNull();
    assertThat(spec.budgetMillis()).isEqualTo(2000);
    assertThat(spec.sizes()).isEmpty();
    assertThat(spec.measuresPoints()).isTrue();
    ProfileSpec groupings = AvroMapper.spec(request().setGroupings(List.of(List.of(1, 1))).setBudgetMs(50).build(), 2000);
    assertThat(groupings.measuresPoints()).isFalse();
    assertThat(groupings.budgetMillis()).isEqualTo(50);
    assertThat(AvroMapper.isFor(request().build(), "anyone")).isTrue();
    assertThat(AvroMapper.isFor(request().setHost("h2").build(), "h1")).isFalse();
  }

  @Test
  void shouldRefuseARequestNamingTheField() {
    assertThatThrownBy(() -> AvroMapper.spec(request().setModel(" ").build(), 1)).hasMessageStartingWith("model:");
    assertThatThrownBy(() -> AvroMapper.spec(request().setRequestId("").build(), 1))
        .hasMessageStartingWith("requestId:");
    assertThatThrownBy(() -> AvroMapper.spec(request().setSizes(List.of(1, 0)).build(), 1))
        .hasMessageStartingWith("sizes:");
    assertThatThrownBy(() -> AvroMapper.spec(request().setBatches(List.of(-2)).build(), 1))
        .hasMessageStartingWith("batches:");
    assertThatThrownBy(() -> AvroMapper.spec(request().setGroupings(List.of(List.of(1), List.of())).build(), 1))
        .hasMessageStartingWith("groupings[1]:");
    assertThatThrownBy(() -> AvroMapper.spec(request().setBudgetMs(-1).build(), 1)).hasMessageStartingWith("budgetMs:");
    assertThatThrownBy(() -> AvroMapper.spec(request().setProviders(List.of("TPU")).build(), 1))
        .hasMessageStartingWith("providers: unknown provider 'TPU'");
  }

  @Test
  void shouldMeasureOnlyTheProvidersARequestNames() {
    ProfileSpec spec = AvroMapper.spec(request().setProviders(List.of("CPU")).setGroupings(List.of(List.of(1, 1)))
        .setBatches(List.of(1)).build(), 100);

    assertThat(spec.providers()).containsExactly(io.partita.profiler.env.ProviderProbe.Provider.CPU);
    assertThat(AvroMapper.spec(request().build(), 100).providers()).isEmpty();
  }

  @Test
  void shouldKeyStatusByRequestAndHost() {
    assertThat(AvroMapper.statusKey("r1", "h1")).isEqualTo("r1/h1");
  }
}

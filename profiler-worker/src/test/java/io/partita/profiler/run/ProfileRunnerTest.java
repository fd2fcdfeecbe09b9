package io.partita.profiler.run;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.env.ProviderProbe.Provider;
import io.partita.profiler.measure.GroupingResult;
import io.partita.profiler.measure.Measurer;
import io.partita.profiler.measure.ModelRef;
import io.partita.profiler.measure.TimingResult;
import io.partita.profiler.onnx.TestModels;
import io.partita.profiler.stats.Sampler;
import io.partita.profiler.stats.StabilityRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Real ONNX Runtime sessions on a small model; the stability rule decides which points settle. */
class ProfileRunnerTest {

  private static final OrtEnvironment ENV = OrtEnvironment.getEnvironment();
  private static final ModelRef MATMUL = ModelRef.ofBytes("matmul", "1", TestModels.matMul(-1, 32, 32));
  private static ProbedHost host;

  @BeforeAll
  static void probeHost() {
    HostProbe probe = HostProbe.live();
    host = probe.probe(probe.hostname(), ProviderProbe.probe(ENV));
  }

  /** What the sink was handed, in order. */
  private static final class Recorded implements ProfileSink {
    final List<String> starts = new ArrayList<>();
    final List<TimingResult> points = new ArrayList<>();
    final List<String> done = new ArrayList<>();

    @Override
    public void starting(int done, int total, String label) {
      starts.add(done + "/" + total + " " + label);
    }

    @Override
    public void point(TimingResult result, int done, int total) {
      points.add(result);
      this.done.add(done + "/" + total);
    }

    @Override
    public void grouping(GroupingResult result, int done, int total) {
      throw new AssertionError("no grouping was asked for");
    }
  }

  private static ProfileOutcome run(StabilityRule rule, Recorded sink) {
    // 2 warm-up runs, then the spec's budget, with no further budgets for a point that does not settle
    Sampler.Settings sampler = new Sampler.Settings(2, 1_000_000_000L, 1_000_000, rule, true, 100);
    ProfileRunner runner = new ProfileRunner(ENV, new Measurer.Settings(sampler, Map.of(), CommandRunner.processes(), false, true));
    ProfileSpec spec = new ProfileSpec("test-" + rule.minSamples(), "matmul", "1", List.of(1), List.of(1, 4), List.of(),
        List.of(Provider.CPU), 20);
    return runner.run(spec, host, List.of(MATMUL), sink);
  }

  @Test
  void shouldMeasureAPointThatDidNotSettleOnceMoreAfterTheOthersAndKeepTheSecondResult() {
    // a rule no point can meet: never this many samples in 20 ms, and the rate rule needs as many
    StabilityRule never = new StabilityRule(0.05, 10_000_000);
    Recorded sink = new Recorded();

    ProfileOutcome outcome = run(never, sink);

    assertThat(outcome.error()).isNull();
    assertThat(sink.starts).containsExactly(
        "0/2 matmul/1 CPU size=1 batch=1",
        "1/2 matmul/1 CPU size=1 batch=4",
        "2/4 matmul/1 CPU size=1 batch=1 (again: it did not settle)",
        "3/4 matmul/1 CPU size=1 batch=4 (again: it did not settle)");
    assertThat(sink.done).containsExactly("1/2", "2/2", "3/4", "4/4");
    assertThat(sink.points).allSatisfy(p -> {
      assertThat(p.ok()).as(String.valueOf(p.error())).isTrue();
      assertThat(p.stable()).isFalse();
    });
    // the outcome holds one result per point, the second try's, in the listed order
    assertThat(outcome.steps()).isEqualTo(2);
    assertThat(outcome.points()).containsExactly(sink.points.get(2), sink.points.get(3));
  }

  @Test
  void shouldNotMeasureAgainAPointThatSettled() {
    // the median's interval within +-99 % of it from 6 samples on: met by any run of a steady model
    StabilityRule loose = new StabilityRule(0.99, 6);
    Recorded sink = new Recorded();

    ProfileOutcome outcome = run(loose, sink);

    assertThat(sink.points).extracting(TimingResult::stable).containsExactly(true, true);
    assertThat(sink.starts).containsExactly("0/2 matmul/1 CPU size=1 batch=1", "1/2 matmul/1 CPU size=1 batch=4");
    assertThat(outcome.points()).containsExactlyElementsOf(sink.points);
  }
}

package io.partita.profiler.measure;

import static org.assertj.core.api.Assertions.assertThat;

import ai.onnxruntime.OrtEnvironment;
import io.partita.profiler.env.CommandRunner;
import io.partita.profiler.env.ProbedHost;
import io.partita.profiler.env.HostProbe;
import io.partita.profiler.env.ProviderProbe;
import io.partita.profiler.search.Measured;
import io.partita.profiler.stats.Sampler;
import io.partita.profiler.stats.StabilityRule;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The real search on the reference model with tiny budgets: structure only, never speed. */
class BaselineBenchmarkTest {

  @Test
  void shouldSearchTheReferenceModelAndScoreTheBestPointItMeasured() {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    HostProbe probe = HostProbe.live();
    ProbedHost host = probe.probe(probe.hostname(), ProviderProbe.probe(env));
    Sampler.Settings tiny = new Sampler.Settings(1, 20_000_000L, 1_000_000, StabilityRule.DEFAULT, true, 100);
    Measurer measurer = new Measurer(env, host, new Measurer.Settings(tiny, Map.of(), CommandRunner.processes(), false, true));

    BaselineBenchmark.Report report = new BaselineBenchmark(measurer).run(false, ProgressListener.NONE);

    assertThat(report.score().referenceModel()).isEqualTo("reference-mlp-3x256");
    assertThat(report.score().gridSize()).isEqualTo(2 * host.usableCores() * 20);
    assertThat(report.searched()).hasSize(report.score().pointsMeasured());
    assertThat(report.score().pointsMeasured()).isBetween(3, report.score().gridSize());
    assertThat(report.searched().get(0).point().threads()).isEqualTo(host.usableCores());
    assertThat(report.searched().get(0).point().batch()).isEqualTo(1);
    double bestSeen = report.searched().stream().filter(m -> !m.failed()).mapToDouble(Measured::throughput).max().orElseThrow();
    assertThat(report.score().throughput()).isPositive().isEqualTo(bestSeen);
    assertThat(report.grid()).isEmpty();
    assertThat(host.withBaseline(report.score()).baseline()).isEqualTo(report.score());
  }

  @Test
  void shouldHoldTheScoreToWhatACpuQuotaLetsTheHostSustain() {
    // no quota, or one above the threads used: the fast tail, as before
    assertThat(BaselineBenchmark.score(1000, 400, null, 1)).isEqualTo(1000);
    assertThat(BaselineBenchmark.score(1000, 400, 2.0, 1)).isEqualTo(1000);
    // a fifth of a core, runs that fit its slice: the fast tail scaled, or the sustained rate if larger
    assertThat(BaselineBenchmark.score(1000, 190, 0.2, 1)).isEqualTo(200);
    assertThat(BaselineBenchmark.score(1000, 210, 0.2, 1)).isEqualTo(210);
    // runs long enough to be throttled themselves: their p10 carries the pauses; the sustained rate
    assertThat(BaselineBenchmark.score(250, 200, 0.2, 1)).isEqualTo(200);
    // two threads on a one-core quota
    assertThat(BaselineBenchmark.score(1000, 100, 1.0, 2)).isEqualTo(500);
  }
}

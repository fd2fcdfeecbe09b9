package io.partita.profiler.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;

class SamplerTest {

  /** A clock that only moves when a trial "runs", by the duration the script gives for that run. */
  private static final class ScriptedWork {
    long now;
    final AtomicInteger runs = new AtomicInteger();
    final IntToLongFunction durationOfRun;

    ScriptedWork(IntToLongFunction durationOfRun) {
      this.durationOfRun = durationOfRun;
    }

    long clock() {
      return now;
    }

    void run() {
      now += durationOfRun.applyAsLong(runs.getAndIncrement());
    }
  }

  private static final long MS = 1_000_000L;

  @Test
  void shouldStopOnceTheMedianIsStableAndThereAreEnoughSamplesForP99() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> 2 * MS);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(1000), work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.STABLE);
    assertThat(out.stable()).isTrue();
    assertThat(out.samplesNanos()).hasSize(100);
    assertThat(work.runs.get()).isEqualTo(103); // 3 warm-up runs are not timed
    assertThat(out.summary().p50Nanos()).isEqualTo(2 * MS);
    assertThat(out.elapsedNanos()).isEqualTo(200 * MS);
    assertThat(out.throughput(4)).isEqualTo(2000.0); // 4 items per 2 ms
  }

  @Test
  void shouldStopASlowModelAtTheRulesMinimumOnceAQuarterOfTheBudgetHasPassed() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> 100 * MS);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(10_000), work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.STABLE);
    assertThat(out.samplesNanos()).hasSize(25); // 25 x 100 ms = a quarter of 10 s
  }

  @Test
  void shouldStopAtTheRulesMinimumWhenNoExtraSamplesAreAsked() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> 2 * MS);
    Sampler.Settings settings = new Sampler.Settings(1, 1000 * MS, 1_000_000, StabilityRule.DEFAULT, true, 0);
    Sampler.Outcome out = Sampler.sample(settings, work::clock, work::run);
    assertThat(out.samplesNanos()).hasSize(10);
  }

  @Test
  void shouldExcludeSlowWarmUpRunsFromTheSamples() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> i < 3 ? 500 * MS : MS);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(1000), work::clock, work::run);
    assertThat(out.summary().maxNanos()).isEqualTo(MS);
  }

  @Test
  void shouldStopAfterTheUnsettledBudgetsWhenTheMedianNeverSettles() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> i % 2 == 0 ? MS : 3 * MS);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(100), work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.BUDGET);
    assertThat(out.stable()).isFalse();
    // the budget and three more, stopping after the run that crossed them
    assertThat(out.elapsedNanos()).isGreaterThanOrEqualTo(400 * MS);
    assertThat(out.elapsedNanos()).isLessThan(404 * MS);
    assertThat(out.summary().p50Nanos()).isLessThanOrEqualTo(out.summary().p90Nanos());
    assertThat(out.summary().p90Nanos()).isLessThanOrEqualTo(out.summary().p99Nanos());
  }

  /** Times spread evenly over 50-150 ms in a shuffled cycle: the median's interval narrows as 1/sqrt(n). */
  private static long spread(int run) {
    return (50 + (run * 37L) % 101) * MS;
  }

  @Test
  void shouldSettleANoisyMedianInTheUnsettledBudgets() throws Exception {
    // 20 s takes about 200 runs, whose median interval is about +-7 %; settling at +-5 % needs about 400
    ScriptedWork work = new ScriptedWork(SamplerTest::spread);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(20_000), work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.STABLE);
    assertThat(out.stable()).isTrue();
    assertThat(out.elapsedNanos()).isGreaterThan(20_000 * MS).isLessThan(80_000 * MS);
  }

  @Test
  void shouldStopAtTheBudgetWithNoUnsettledBudgets() throws Exception {
    ScriptedWork work = new ScriptedWork(SamplerTest::spread);
    Sampler.Settings settings = new Sampler.Settings(3, 20_000 * MS, 1_000_000, StabilityRule.DEFAULT, true, 100);
    Sampler.Outcome out = Sampler.sample(settings, work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.BUDGET);
    assertThat(out.stable()).isFalse();
    assertThat(out.elapsedNanos()).isGreaterThanOrEqualTo(20_000 * MS).isLessThan(20_200 * MS);
  }

  @Test
  void shouldStopAtTheBudgetWhenTheMedianNeverSettlesAndNoMoreIsGiven() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> i % 2 == 0 ? MS : 3 * MS);
    Sampler.Outcome out = Sampler.sample(new Sampler.Settings(3, 100 * MS, 1_000_000, StabilityRule.DEFAULT, true, 100),
        work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.BUDGET);
    assertThat(out.stable()).isFalse();
    assertThat(out.elapsedNanos()).isGreaterThanOrEqualTo(100 * MS);
    assertThat(out.elapsedNanos()).isLessThan(104 * MS); // stops after the run that crossed the budget
    assertThat(out.summary().p50Nanos()).isLessThanOrEqualTo(out.summary().p90Nanos());
    assertThat(out.summary().p90Nanos()).isLessThanOrEqualTo(out.summary().p99Nanos());
  }

  @Test
  void shouldKeepSamplingUntilTheBudgetWhenAskedNotToStopEarly() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> MS);
    Sampler.Settings settings = Sampler.Settings.ofBudgetMillis(50).withStopWhenStable(false);
    Sampler.Outcome out = Sampler.sample(settings, work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.BUDGET);
    assertThat(out.samplesNanos()).hasSize(50);
    assertThat(out.stable()).isTrue(); // still judged, just not used to stop
  }

  @Test
  void shouldStopAtTheSampleCap() throws Exception {
    ScriptedWork work = new ScriptedWork(i -> i % 2 == 0 ? 1 : 1000);
    Sampler.Settings settings = new Sampler.Settings(1, 1_000 * MS, 2500, StabilityRule.DEFAULT, true, 100);
    Sampler.Outcome out = Sampler.sample(settings, work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.MAX_SAMPLES);
    assertThat(out.samplesNanos()).hasSize(2500);
  }

  @Test
  void shouldSettleOnceANoisyStartGivesWayToSteadyTimes() throws Exception {
    // 30 erratic runs, then steady 10 ms: stops stable, the median is the steady time
    ScriptedWork work = new ScriptedWork(i -> i < 33 ? (i % 3 + 1) * 7 * MS : 10 * MS);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(10_000), work::clock, work::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.STABLE);
    assertThat(out.summary().p50Nanos()).isEqualTo(10 * MS);
    assertThat(out.summary().p99Nanos()).isEqualTo(21 * MS);
  }

  @Test
  void shouldPropagateTheTrialsFailure() {
    ScriptedWork work = new ScriptedWork(i -> MS);
    Sampler.Trial failing = () -> {
      throw new IllegalStateException("boom");
    };
    assertThatThrownBy(() -> Sampler.sample(Sampler.Settings.ofBudgetMillis(10), work::clock, failing))
        .hasMessage("boom");
  }
}

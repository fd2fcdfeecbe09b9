package io.partita.profiler.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

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

  /**
   * A run of {@code cpuNanos} under a CFS quota of {@code quotaNanos} per {@code periodNanos}: the
   * clock moves with the run and, when the period's share is used up, to the next period's start.
   */
  private static final class QuotaWork {
    final long cpuNanos;
    final long quotaNanos;
    final long periodNanos;
    long now;
    long used;

    QuotaWork(long cpuNanos, long quotaNanos, long periodNanos) {
      this.cpuNanos = cpuNanos;
      this.quotaNanos = quotaNanos;
      this.periodNanos = periodNanos;
    }

    long clock() {
      return now;
    }

    void run() {
      long left = cpuNanos;
      while (left > 0) {
        long periodEnd = (now / periodNanos + 1) * periodNanos;
        long take = Math.min(left, Math.min(quotaNanos - used, periodEnd - now));
        if (take <= 0) { // the period's share is spent: wait for the next period
          now = periodEnd;
          used = 0;
          continue;
        }
        now += take;
        used += take;
        left -= take;
        if (now == periodEnd) {
          used = 0;
        }
      }
    }
  }

  @Test
  void shouldCallAQuotaSplitPointStableByItsRateWhereItsMedianNeverSettles() throws Exception {
    // 3 ms of CPU per run under 6 ms per 10 ms: every other run meets the end of the period's share
    // and waits 4 ms, so runs take 3 or 7 ms, half and half, and the median lies between the modes
    long cpu = 3 * MS;
    QuotaWork medianOnly = new QuotaWork(cpu, 6 * MS, 10 * MS);
    Sampler.Outcome unsettled = Sampler.sample(Sampler.Settings.ofBudgetMillis(2000), medianOnly::clock, medianOnly::run);
    assertThat(unsettled.stable()).isFalse();
    assertThat(unsettled.reason()).isEqualTo(Sampler.StopReason.BUDGET);

    QuotaWork quota = new QuotaWork(cpu, 6 * MS, 10 * MS);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(2000).withRateBlocks(100 * MS),
        quota::clock, quota::run);
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.STABLE);
    assertThat(out.stable()).isTrue();
    // it stops once ten blocks of 100 ms were timed, well inside the budget
    assertThat(out.elapsedNanos()).isGreaterThanOrEqualTo(1000 * MS).isLessThan(2000 * MS);
    // the rate is the quota's: 6 ms of CPU per 10 ms, so 5 ms a run
    assertThat(1000.0 / out.throughput(1)).isCloseTo(5.0, within(0.1));
  }

  @Test
  void shouldRunASmallModelForFiveQuotaPeriodsSoThatItsThroughputShowsTheQuota() throws Exception {
    // 10 us of CPU per run under 2 ms per 10 ms (a fifth of a core): 100 runs fit in one period's share
    QuotaWork unbounded = new QuotaWork(10_000, 2 * MS, 10 * MS);
    Sampler.Outcome fast = Sampler.sample(Sampler.Settings.ofBudgetMillis(100), unbounded::clock, unbounded::run);
    assertThat(fast.samplesNanos()).as("without the quota's rule").hasSize(100);
    assertThat(1000.0 / fast.throughput(1)).as("ms per run, full speed").isCloseTo(0.01, within(0.001));

    QuotaWork quota = new QuotaWork(10_000, 2 * MS, 10 * MS);
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(100).withRateBlocks(10 * MS),
        quota::clock, quota::run);
    assertThat(out.stable()).isTrue();
    assertThat(out.elapsedNanos()).isGreaterThanOrEqualTo(50 * MS);
    // five periods of which each grants a fifth: 50 us per run
    assertThat(1000.0 / out.throughput(1)).as("ms per run under the quota").isCloseTo(0.05, within(0.005));
  }

  @Test
  void shouldNotCallADriftingRateStableUnderAQuota() throws Exception {
    // each run 5 % slower than the one before: neither the median nor the rate settles
    ScriptedWork work = new ScriptedWork(i -> (long) (MS * Math.pow(1.05, i)));
    Sampler.Outcome out = Sampler.sample(Sampler.Settings.ofBudgetMillis(100).withRateBlocks(MS), work::clock, work::run);
    assertThat(out.stable()).isFalse();
    assertThat(out.reason()).isEqualTo(Sampler.StopReason.BUDGET);
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

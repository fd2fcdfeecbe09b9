package io.partita.worker.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ServingCostTest {
  private static final long MS = 1_000_000;

  /** {@code seconds} of serving at {@code perSecond} items, each costing {@code cpuMs} of CPU and {@code engineMs} in the engine. */
  private static void serve(ServingCost cost, long[] counters, int seconds, int perSecond, double cpuMs, double engineMs,
                            double cores) {
    for (int i = 0; i < seconds; i++) {
      counters[0] += 1_000;
      counters[1] += (long) (perSecond * cpuMs * MS);
      counters[2] += perSecond;
      counters[3] += (long) (perSecond * engineMs * MS);
      cost.sample(counters[0], counters[1], counters[2], counters[3], cores);
    }
  }

  @Test
  void shouldCountTheCpuOutsideRunsPerItemAsTimeOfTheBudget() {
    ServingCost cost = new ServingCost();
    long[] counters = new long[4];
    // 200 items/s, each 1.2 ms of CPU of which 0.2 ms in the engine, on a host of 0.5 cores
    serve(cost, counters, 10, 200, 1.2, 0.2, 0.5);

    assertThat(cost.overheadSeconds()).hasValueCloseTo(0.002, within(1e-6)); // 1 ms of CPU is 2 ms of half a core
    assertThat(cost.budgetCores()).isEqualTo(0.5);
  }

  @Test
  void shouldReadNothingWhileTooFewItemsRan() {
    ServingCost cost = new ServingCost();
    long[] counters = new long[4];
    serve(cost, counters, 20, 4, 5.0, 0.1, 1.0); // 80 items over 20 s: background work, not serving

    assertThat(cost.overheadSeconds()).isEmpty();
  }

  @Test
  void shouldKeepTheLastReadingThroughAnIdleWindowAndFollowANewLoad() {
    ServingCost cost = new ServingCost();
    long[] counters = new long[4];
    serve(cost, counters, 30, 300, 1.0, 0.0, 1.0);
    assertThat(cost.overheadSeconds()).hasValueCloseTo(0.001, within(1e-6));

    serve(cost, counters, 60, 0, 0.0, 0.0, 1.0); // idle: nothing to read, the last value stands
    assertThat(cost.overheadSeconds()).hasValueCloseTo(0.001, within(1e-6));

    serve(cost, counters, 31, 300, 2.0, 0.0, 1.0); // a new load that costs twice the CPU
    assertThat(cost.overheadSeconds()).hasValueCloseTo(0.002, within(1e-6));
  }

  /**
   * A host slowed to a quarter of its core loses its share and serves nothing: the CPU an item cost
   * stands, over the budget of the moment, so the restore is read at once, not after new traffic
   * that the slow figure would keep away.
   */
  @Test
  void shouldReadABudgetChangeAtOnceWhileIdle() {
    ServingCost cost = new ServingCost();
    long[] counters = new long[4];
    serve(cost, counters, 30, 300, 1.0, 0.0, 1.0);

    serve(cost, counters, 5, 0, 0.0, 0.0, 0.25);
    assertThat(cost.overheadSeconds()).hasValueCloseTo(0.004, within(1e-6));

    serve(cost, counters, 60, 0, 0.0, 0.0, 1.0);
    assertThat(cost.overheadSeconds()).hasValueCloseTo(0.001, within(1e-6));
  }

  @Test
  void shouldNotCountTheEngineTwiceWhenItTookMoreThanTheProcessCpuSays() {
    ServingCost cost = new ServingCost();
    long[] counters = new long[4];
    serve(cost, counters, 10, 100, 1.0, 2.0, 1.0);

    assertThat(cost.overheadSeconds()).hasValue(0.0);
  }

  @Test
  void shouldBeginAgainWhenACounterRestarts() {
    ServingCost cost = new ServingCost();
    long[] counters = new long[4];
    serve(cost, counters, 10, 100, 1.0, 0.0, 1.0);
    counters[1] = 0;
    counters[2] = 0;
    counters[3] = 0;
    serve(cost, counters, 10, 100, 3.0, 0.0, 1.0);

    assertThat(cost.overheadSeconds()).hasValueCloseTo(0.003, within(1e-6));
  }

  @Test
  void shouldRefuseABudgetOfNothing() {
    assertThatThrownBy(() -> new ServingCost().sample(0, 0, 0, 0, 0)).hasMessageContaining("budgetCores");
  }
}

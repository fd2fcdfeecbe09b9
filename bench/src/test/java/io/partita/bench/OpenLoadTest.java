package io.partita.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.bench.OpenLoad.Outcome;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OpenLoadTest {

  @Test
  void shouldKeepEveryCallsOutcomeAndCountTheUnansweredAsLost() throws Exception {
    ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
    try {
      Map<String, OpenLoad.Caller> callers = new LinkedHashMap<>();
      // seq % 2 == 0: this caller; every 10th call of it is never answered, every 5th (not 10th) is an error
      callers.put("a", seq -> {
        if (seq % 20 == 0) {
          return new CompletableFuture<>();
        }
        CompletableFuture<Outcome> f = new CompletableFuture<>();
        Outcome o = seq % 10 == 0 ? new Outcome("NOT_READY", null, "no instance") : Outcome.ok("host-1");
        later.schedule(() -> f.complete(o), 5, TimeUnit.MILLISECONDS);
        return f;
      });
      callers.put("b", seq -> seq == 7 ? CompletableFuture.failedFuture(new IllegalStateException("boom"))
          : CompletableFuture.completedFuture(Outcome.ok("host-2")));
      long[] ticks = {0};

      Calls calls = OpenLoad.run(callers, 200, Duration.ofSeconds(2), Duration.ofMillis(300), s -> ticks[0] = s);

      assertThat(calls.sent()).isEqualTo(400);
      assertThat(calls.lost()).isEqualTo(20); // seq 0, 20, ..., 380
      assertThat(calls.errors()).containsEntry("NOT_READY", 20L).containsEntry("FAILED", 1L).hasSize(2);
      assertThat(calls.ok()).isEqualTo(400 - 20 - 20 - 1);
      assertThat(calls.okByHost()).containsEntry("host-1", 160L).containsEntry("host-2", 199L);
      assertThat(calls.share("host-1")).isCloseTo(160 / 359.0, org.assertj.core.api.Assertions.within(1e-9));
      assertThat(calls.okLatencyMs(50, 0, 2)).isBetween(0.0, 1_000.0);
      assertThat(ticks[0]).isGreaterThanOrEqualTo(1);
      assertThat(calls.sentBetween(0, 1).sent()).isBetween(195L, 205L);
    } finally {
      later.shutdownNow();
    }
  }

  @Test
  void shouldFindWhenTheAnswersPerSecondAreBackNearTheBaseline() {
    // 10 OK answers a second, none from second 10 to 14 (a fault at 10), 10 again from 15 on
    java.util.List<OpenLoad.Call> list = new java.util.ArrayList<>();
    long seq = 0;
    for (int second = 0; second < 25; second++) {
      for (int i = 0; i < 10; i++) {
        long sent = second * 1_000_000_000L + i * 100_000_000L;
        boolean stalled = second >= 10 && second < 15;
        list.add(new OpenLoad.Call(seq++, "a", sent, stalled ? -1 : sent + 1_000_000, stalled ? null : Outcome.ok("h")));
      }
    }
    Calls calls = new Calls(list, 0);

    assertThat(calls.okRate(0, 10)).isEqualTo(10.0);
    assertThat(calls.recoverySeconds(10, 10, 0.1, 3)).isEqualTo(5);
    assertThat(calls.recoverySeconds(10, 50, 0.1, 3)).isEqualTo(-1);
    assertThat(calls.lost()).isEqualTo(50);
    assertThat(Calls.percentile(new double[] {1, 2, 3, 4}, 50)).isEqualTo(2);
    assertThat(Calls.percentile(new double[] {1, 2, 3, 4}, 99)).isEqualTo(4);
    assertThat(Calls.percentile(new double[0], 50)).isNaN();
  }
}

package io.partita.gateway.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TrafficTest {
  // The registry the gateway uses (GatewayMetrics): its histogram counts are what Traffic differences.
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  private void call(String model, String outcome, long ms) {
    Timer.builder(Traffic.TIMER).tag("model", model).tag("endpoint", "infer").tag("outcome", outcome)
        .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(60))
        .register(registry).record(Duration.ofMillis(ms));
  }

  @Test
  void shouldGiveRateErrorsAndBucketPercentilesOfTheWindowOnly() {
    Traffic traffic = new Traffic(registry, 10, 60);
    for (int i = 0; i < 50; i++) {
      call("m", "ok", 500); // before the window: must not count in the percentiles
    }
    traffic.sample(Set.of("m"), 0);
    for (int i = 0; i < 98; i++) {
      call("m", "ok", 3);
    }
    call("m", "deadline", 40);
    call("m", "deadline", 40);
    traffic.sample(Set.of("m"), 2000);

    Traffic.Figures f = traffic.figures("m");
    assertThat(f.requests()).isEqualTo(150);
    assertThat(f.errors()).isEqualTo(2);
    assertThat(f.rate()).isEqualTo(50.0); // 100 calls in 2 s
    assertThat(f.errorRate()).isEqualTo(1.0);
    assertThat(f.windowRequests()).isEqualTo(100);
    assertThat(f.windowErrors()).isEqualTo(2);
    // Bucket upper bounds: at or above the true value, well below the older 500 ms calls.
    assertThat(f.p50Ms()).isBetween(3.0, 6.0);
    assertThat(f.p99Ms()).isBetween(40.0, 80.0);
    assertThat(f.history()).hasSize(1);
  }

  @Test
  void shouldIgnoreOtherEndpointsAndGiveNoPercentileWithoutCalls() {
    Traffic traffic = new Traffic(registry, 10, 60);
    Timer.builder(Traffic.TIMER).tag("model", "m").tag("endpoint", "metadata").tag("outcome", "ok").register(registry)
        .record(Duration.ofMillis(1));
    traffic.sample(Set.of("m"), 0);
    traffic.sample(Set.of("m"), 1000);
    Traffic.Figures f = traffic.figures("m");
    assertThat(f.requests()).isZero();
    assertThat(f.p99Ms()).isNull();
    assertThat(traffic.figures("unknown")).isNull();
  }
}

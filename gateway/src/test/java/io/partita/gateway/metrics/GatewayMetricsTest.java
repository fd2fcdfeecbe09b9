package io.partita.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.partita.gateway.limits.Capacity;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.server.HttpStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class GatewayMetricsTest {

  @Test
  void shouldTagARefusalOfAnyTransportAsTheHttpStatusOfItsKindIsTagged() {
    for (Kind kind : Kind.values()) {
      assertThat(GatewayMetrics.outcome(kind)).as("%s", kind).isEqualTo(GatewayMetrics.outcome(HttpStatus.of(kind)));
    }
  }

  @Test
  void shouldCountTheSameRefusedInferCallsAsDemandWhateverTheTransport() {
    // Given two gateways' metrics, one fed HTTP statuses and one refusal kinds
    List<String> byStatus = new ArrayList<>();
    List<String> byKind = new ArrayList<>();
    GatewayMetrics http = new GatewayMetrics(Set.of("demo"), new Capacity(10, 0.5));
    GatewayMetrics grpc = new GatewayMetrics(Set.of("demo"), new Capacity(10, 0.5));
    http.countDemandWith(byStatus::add);
    grpc.countDemandWith(byKind::add);

    // When each refuses one infer call of every kind, named after the kind, and serves one
    for (Kind kind : Kind.values()) {
      http.request(kind.name(), "infer", HttpStatus.of(kind), 1_000);
      grpc.refused(kind.name(), "infer", kind, 1_000);
    }
    http.request("served", "infer", 200, 1_000);
    grpc.served("served", "infer", 1_000);

    // Then both counted the same calls: those that reached routing, the limit or a worker
    assertThat(byKind).isEqualTo(byStatus).contains("served", Kind.OVERLOADED.name()).doesNotContain(Kind.BAD_INPUT.name());
  }

  @Test
  void shouldCountEachAnsweredCallInTheTimerOfItsModelEndpointAndOutcome() {
    // Given a gateway's metrics that know one service model
    GatewayMetrics metrics = new GatewayMetrics(Set.of("demo"), new Capacity(10, 0.5));

    // When calls are answered: three infer calls of demo, one refused, one of an unknown model, a health call
    metrics.request("demo", "infer", 200, 2_000_000);
    metrics.request("demo", "infer", 200, 3_000_000);
    metrics.served("demo", "infer", 5_000_000);
    metrics.request("demo", "infer", 429, 1_000_000);
    metrics.request("nobody", "infer", 404, 1_000_000);
    metrics.request(null, "health", 200, 1_000_000);

    // Then each lands in its own timer, the repeated ones added up, an unknown model tagged none
    assertThat(timer(metrics, "demo", "infer", "ok").count()).isEqualTo(3);
    assertThat(timer(metrics, "demo", "infer", "ok").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(10.0);
    assertThat(timer(metrics, "demo", "infer", "overloaded").count()).isEqualTo(1);
    assertThat(timer(metrics, "none", "infer", "not_found").count()).isEqualTo(1);
    assertThat(timer(metrics, "none", "health", "ok").count()).isEqualTo(1);
    assertThat(metrics.registry().find("partita.gateway.requests").timers()).hasSize(4);
  }

  private static Timer timer(GatewayMetrics metrics, String model, String endpoint, String outcome) {
    return metrics.registry().get("partita.gateway.requests").tags("model", model, "endpoint", endpoint, "outcome", outcome).timer();
  }
}

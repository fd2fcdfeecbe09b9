package io.partita.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.gateway.limits.Capacity;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.server.HttpStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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
}

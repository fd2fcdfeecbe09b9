package io.partita.gateway.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.partita.common.health.LoopGuard;
import io.partita.gateway.routing.NotRoutableException;
import io.partita.gateway.routing.Routing;
import io.partita.gateway.server.HttpStatus;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;

class ReadinessTest {
  private static Routing routing(boolean caughtUp, Set<String> routable) {
    return new Routing() {
      @Override
      public Target choose(String serviceModel, String version) {
        if (!routable.contains(serviceModel)) {
          throw new NotRoutableException("no route");
        }
        return Target.ANY_PARTITION;
      }

      @Override
      public boolean ready(String serviceModel) {
        return routable.contains(serviceModel);
      }

      @Override
      public boolean ready() {
        return caughtUp;
      }

      @Override
      public Mode mode() {
        return Mode.PLAN;
      }
    };
  }

  @Test
  void shouldAnswer503NamingADeadLoop() {
    // Given every loop ready and a routable model
    GatewayLoops loops = new GatewayLoops();
    LoopGuard replies = loops.register(GatewayLoops.REPLIES);
    LoopGuard routes = loops.register(GatewayLoops.ROUTES);
    replies.ready();
    routes.ready();
    Readiness readiness = new Readiness(loops.loops(), routing(true, Set.of("demo")), List.of("demo"));
    assertThat(readiness.server()).isEqualTo(Readiness.Verdict.READY);
    assertThat(HttpStatus.of(readiness.model("demo"))).isEqualTo(200);

    // When the reply loop dies
    replies.died(new IllegalStateException("consumer closed"));

    // Then the gateway and every model are 503, naming the loop
    assertThat(HttpStatus.of(readiness.server())).isEqualTo(503);
    assertThat(readiness.server().reason()).isEqualTo("loop 'gateway-replies' died: IllegalStateException: consumer closed");
    assertThat(HttpStatus.of(readiness.model("demo"))).isEqualTo(503);
    assertThat(readiness.model("demo").reason()).contains("gateway-replies");
  }

  @Test
  void shouldNotBeReadyWhileALoopIsStartingOrFaulted() {
    GatewayLoops loops = new GatewayLoops();
    LoopGuard status = loops.register(GatewayLoops.JOB_STATUS);
    Readiness readiness = new Readiness(loops.loops(), routing(true, Set.of("demo")), List.of("demo"));
    assertThat(readiness.server().reason()).isEqualTo("loop 'gateway-jobs-status' is starting");
    status.ready();
    assertThat(readiness.server().ready()).isTrue();
    status.faulted("reading p.jobs.status", new KafkaException("broker gone"));
    assertThat(readiness.server().reason()).contains("gateway-jobs-status").contains("broker gone");
    status.ready();
    assertThat(readiness.server().ready()).isTrue();
  }

  @Test
  void shouldNameRoutingWhenLoopsAreFineButNothingIsRoutable() {
    GatewayLoops loops = new GatewayLoops();
    loops.register(GatewayLoops.REPLIES).ready();
    assertThat(new Readiness(loops.loops(), routing(false, Set.of()), List.of("demo")).server().reason())
        .contains("route table");
    Readiness noRoute = new Readiness(loops.loops(), routing(true, Set.of("other")), List.of("demo", "other"));
    assertThat(noRoute.server().ready()).isTrue();
    assertThat(noRoute.model("demo").reason()).isEqualTo("model 'demo' has no ready instance in its route");
  }

  @Test
  void shouldRunAddedChecksAfterTheOthers() {
    GatewayLoops loops = new GatewayLoops();
    loops.register(GatewayLoops.REPLIES).ready();
    Readiness strict = new Readiness(loops.loops(), Routing.any(), List.of("demo"))
        .withServerCheck(() -> Optional.of("model 'x' of the catalog is not served"));
    assertThat(strict.server().reason()).isEqualTo("model 'x' of the catalog is not served");
  }
}

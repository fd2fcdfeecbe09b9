package io.partita.gateway.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.avro.Route;
import io.partita.avro.RouteInstance;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class PlanRoutingTest {
  private final Map<String, Route> routes = new HashMap<>();
  private final AtomicBoolean caughtUp = new AtomicBoolean(true);
  private final PlanRouting routing = new PlanRouting(routes::get, caughtUp::get);

  static RouteInstance instance(String id, boolean ready, String reason, int inFlight, int queueDepth, Integer... partitions) {
    return RouteInstance.newBuilder().setInstanceId(id).setHost("host-" + id.charAt(id.length() - 1)).setSlot("cpu-0")
        .setReady(ready).setReason(reason).setPartitions(List.of(partitions)).setInFlight(inFlight)
        .setQueueDepth(queueDepth).build();
  }

  static Route route(String model, RouteInstance... instances) {
    int ready = (int) List.of(instances).stream().filter(RouteInstance::getReady).count();
    return Route.newBuilder().setServiceModel(model).setRequestTopic("p.requests." + model).setReadyInstances(ready)
        .setInstances(List.of(instances)).build();
  }

  @Test
  void shouldRefuseAModelWithoutARoute() {
    assertThatThrownBy(() -> routing.choose("demo-a")).isInstanceOf(NotRoutableException.class)
        .hasMessage("no route for model 'demo-a' yet (is the planner running?)");
    assertThat(routing.ready("demo-a")).isFalse();
  }

  @Test
  void shouldRefuseARouteWithoutReadyInstancesNamingEachReason() {
    routes.put("demo-a", route("demo-a",
        instance("demo-a#0", false, "no status from host-0/cpu-0 yet", 0, 0),
        instance("demo-a#1", false, "instance demo-a#1 is NOT_READY: sha256 mismatch", 0, 0, 1)));
    assertThatThrownBy(() -> routing.choose("demo-a")).isInstanceOf(NotRoutableException.class)
        .hasMessage("model 'demo-a' has no ready instance: demo-a#0 on host-0/cpu-0: no status from host-0/cpu-0 yet; "
            + "demo-a#1 on host-1/cpu-0: instance demo-a#1 is NOT_READY: sha256 mismatch");
    assertThat(routing.ready("demo-a")).isFalse();

    routes.put("demo-b", route("demo-b"));
    assertThatThrownBy(() -> routing.choose("demo-b")).hasMessageContaining("the plan places no instance of it");
  }

  @Test
  void shouldLeaveThePartitionToKafkaSoRequestsSpreadOverTheCapacitySharedPartitions() {
    routes.put("m", route("m",
        instance("m#0", true, null, 5, 0, 0, 1, 2),
        instance("m#1", false, "down", 0, 0, 3),
        instance("m#2", true, null, 0, 0, 4)));
    // never a partition of the gateway's choosing, whatever the (stale) load figures say
    for (int i = 0; i < 5; i++) {
      assertThat(routing.choose("m")).isEqualTo(new Routing.Target("m#0", null));
    }
    assertThat(routing.ready("m")).isTrue();
  }

  @Test
  void shouldNameTheReadyInstanceWithTheSmallestIdWhenOnlySomeAreReady() {
    routes.put("m", route("m",
        instance("m#2", true, null, 1, 1, 2),
        instance("m#1", false, "down", 0, 0, 1),
        instance("m#3", true, null, 0, 2, 3)));
    assertThat(routing.choose("m").instanceId()).isEqualTo("m#2");
  }

  @Test
  void shouldBeReadyOnlyOnceTheRouteTableCaughtUp() {
    caughtUp.set(false);
    assertThat(routing.ready()).isFalse();
    caughtUp.set(true);
    assertThat(routing.ready()).isTrue();
    assertThat(Routing.any().choose("anything")).isEqualTo(Routing.Target.ANY_PARTITION);
  }

  @Test
  void shouldRouteAServiceModelWhileAnyInstanceOfItsBaseModelIsReady() {
    Map<String, Route> all = new HashMap<>();
    PlanRouting withFallback = new PlanRouting(all::get, all::values, m -> "p.requests.base", caughtUp::get);
    all.put("a", onTopic(route("a", instance("a#0", true, null, 9, 9, 0)), "p.requests.base"));
    all.put("b", onTopic(route("b", instance("b#1", true, null, 0, 0, 1), instance("b#2", true, null, 0, 1, 2)), "p.requests.base"));
    all.put("x", onTopic(route("x", instance("x#3", true, null, 0, 0, 3)), "p.requests.other"));

    // its own instance first
    assertThat(withFallback.choose("a")).isEqualTo(new Routing.Target("a#0", null));
    // a's instance not ready: a ready instance of the same base model serves it (mounting its weight
    // file on demand), never another base model's
    all.put("a", onTopic(route("a", instance("a#0", false, "down", 0, 0, 0)), "p.requests.base"));
    assertThat(withFallback.choose("a")).isEqualTo(new Routing.Target("b#1", null));
    // a service model without a route of its own, on the same base model
    assertThat(withFallback.choose("c")).isEqualTo(new Routing.Target("b#1", null));
    assertThat(withFallback.ready("c")).isTrue();
    // without the fallback, as before
    assertThatThrownBy(() -> new PlanRouting(all::get, caughtUp::get).choose("a")).isInstanceOf(NotRoutableException.class);
  }

  private static Route onTopic(Route route, String topic) {
    return Route.newBuilder(route).setRequestTopic(topic).build();
  }
}

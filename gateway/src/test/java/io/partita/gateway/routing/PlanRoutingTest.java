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

  static RouteInstance running(String id, String version, boolean ready, Integer... partitions) {
    return RouteInstance.newBuilder(instance(id, ready, ready ? null : "down", 0, 0, partitions)).setVersion(version).build();
  }

  @Test
  void shouldSendAPinnedRequestOnlyToPartitionsOfWorkersRunningItsVersion() {
    // host-0 runs version 2 and owns 0-2; host-1 runs version 1 and owns 3-5; host-2 runs 2 but is not ready
    routes.put("m", route("m", running("m#0", "2", true, 0, 1, 2), running("m#1", "1", true, 3, 4, 5),
        running("m#2", "2", false, 6)));
    Map<Integer, Integer> seen = new HashMap<>();
    for (int i = 0; i < 600; i++) {
      Routing.Target t = routing.choose("m", "2");
      assertThat(t.instanceId()).isEqualTo("m#0");
      seen.merge(t.partition(), 1, Integer::sum);
    }
    assertThat(seen.keySet()).containsExactlyInAnyOrder(0, 1, 2); // never 3-5 (version 1) nor 6 (not ready)
    assertThat(seen.values()).allSatisfy(n -> assertThat(n).isBetween(120, 280)); // spread evenly, about 200 each
    assertThat(routing.choose("m", "1").partition()).isIn(3, 4, 5);
    // not pinned: Kafka's partitioner spreads it, as before
    assertThat(routing.choose("m", null)).isEqualTo(new Routing.Target("m#0", null));
  }

  @Test
  void shouldSendAPinnedRequestAsAnUnpinnedOneWhenNoReadyInstanceNamesAPartitionOfItsVersion() {
    routes.put("m", route("m", running("m#0", "2", true), running("m#1", "1", true, 3)));
    assertThat(routing.choose("m", "2")).as("version 2's worker owns no partition yet").isEqualTo(new Routing.Target("m#0", null));
    assertThat(routing.choose("m", "3")).as("no instance runs version 3").isEqualTo(new Routing.Target("m#0", null));
    routes.put("old", route("old", instance("old#0", true, null, 0, 0, 1, 2)));
    assertThat(routing.choose("old", "1")).as("a route from a planner that names no versions").isEqualTo(new Routing.Target("old#0", null));
  }

  @Test
  void shouldSendAPinnedRequestToTheBaseModelsInstancesOfItsVersionWhenItsOwnRunNone() {
    Map<String, Route> all = new HashMap<>();
    PlanRouting withFallback = new PlanRouting(all::get, all::values, sm -> "p.requests.base", caughtUp::get);
    all.put("a", Route.newBuilder(route("a", running("a#0", "1", true, 0, 1))).setRequestTopic("p.requests.base").build());
    all.put("b", Route.newBuilder(route("b", running("b#0", "2", true, 2, 3))).setRequestTopic("p.requests.base").build());
    for (int i = 0; i < 50; i++) {
      assertThat(withFallback.choose("a", "2").partition()).isIn(2, 3);
    }
    assertThat(withFallback.choose("a", "1").partition()).isIn(0, 1);
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

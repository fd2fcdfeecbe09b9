package io.partita.planning.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class InstanceRouterTest {

  @Test
  void shouldRouteToTheReadyInstanceWithFewestOutstandingRequests() {
    List<InstanceStatus> instances = List.of(
        new InstanceStatus("i1", "chat-legal", true, 2, 5),
        new InstanceStatus("i2", "chat-legal", true, 1, 3),
        new InstanceStatus("i3", "chat-legal", false, 0, 0),
        new InstanceStatus("x", "chat-medical", true, 0, 0));

    RouteDecision d = InstanceRouter.route("chat-legal", instances);

    assertThat(d.chosenInstanceId()).isEqualTo("i2");
    assertThat(d.outstanding()).isEqualTo(4);
    assertThat(d.runnersUp()).extracting(InstanceStatus::instanceId).containsExactly("i1");
    assertThat(d.notReady()).containsExactly("i3");
    assertThat(d.error()).isNull();
  }

  @Test
  void shouldBreakTiesByFewerInFlightThenInstanceId() {
    List<InstanceStatus> instances = List.of(
        new InstanceStatus("b", "s", true, 1, 3),
        new InstanceStatus("c", "s", true, 0, 4),
        new InstanceStatus("a", "s", true, 0, 4));

    assertThat(InstanceRouter.route("s", instances).chosenInstanceId()).isEqualTo("a");
  }

  @Test
  void shouldAnswerAnErrorForAnUnknownOrNotReadyServiceModel() {
    List<InstanceStatus> instances = List.of(new InstanceStatus("i1", "chat-legal", false, 0, 0));

    assertThat(InstanceRouter.route("nope", instances).error()).startsWith("unknown service model nope");
    RouteDecision notReady = InstanceRouter.route("chat-legal", instances);
    assertThat(notReady.chosenInstanceId()).isNull();
    assertThat(notReady.error()).contains("has no ready instance");
  }
}

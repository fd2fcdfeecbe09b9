package io.partita.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.gateway.routing.Routing;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GatewayConfigTest {
  @TempDir Path repo;

  private GatewayConfig config(String... pairs) {
    Map<String, String> values = new HashMap<>(Map.of("kafka.bootstrap.servers", "localhost:1", "model.repo", repo.toString()));
    for (int i = 0; i < pairs.length; i += 2) {
      values.put(pairs[i], pairs[i + 1]);
    }
    return GatewayConfig.from(Settings.of(values));
  }

  @Test
  void shouldRouteByThePlanByDefault() {
    assertThat(config().steering().routing()).isEqualTo(Routing.Mode.PLAN);
    assertThat(config("gateway.routing", "any").steering().routing()).isEqualTo(Routing.Mode.ANY);
    assertThat(config("gateway.routing", "plan").steering().routing()).isEqualTo(Routing.Mode.PLAN);
  }

  @Test
  void shouldPackOnlineCallsByDefaultAndRefuseBadCoalesceSettingsNamingTheKey() {
    assertThat(config().coalesce()).isEqualTo(new GatewayConfig.Coalesce(true, 64, 500));
    assertThat(config("gateway.coalesce.enabled", "false", "gateway.coalesce.max.rows", "8", "gateway.coalesce.window.us", "2000")
        .coalesce()).isEqualTo(new GatewayConfig.Coalesce(false, 8, 2000));
    assertThatThrownBy(() -> config("gateway.coalesce.enabled", "sometimes")).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("gateway.coalesce.enabled=sometimes");
    assertThatThrownBy(() -> config("gateway.coalesce.max.rows", "0")).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("gateway.coalesce.max.rows=0");
    assertThatThrownBy(() -> config("gateway.coalesce.window.us", "0")).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("gateway.coalesce.window.us=0");
    assertThatThrownBy(() -> config("gateway.coalesce.window.us", "soon")).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("gateway.coalesce.window.us=soon");
  }

  @Test
  void shouldNameTheSettingWhenTheRoutingModeIsUnknown() {
    assertThatThrownBy(() -> config("gateway.routing", "random")).isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("gateway.routing=random: must be 'plan'");
  }

  @Test
  void shouldServeGrpcOn8001ByDefaultAndOnAnyFreePortWhenHttpTakesAnyFreePort() {
    assertThat(config().server().grpcPort()).isEqualTo(8001);
    assertThat(config("http.port", "0").server().grpcPort()).isZero();
    assertThat(config("http.port", "0", "gateway.grpc-port", "9001").server().grpcPort()).isEqualTo(9001);
    assertThat(config("gateway.grpc-port", "-1").server().grpcPort()).isEqualTo(-1);
  }

  @Test
  void shouldDefaultTheConnectionTimeoutsAndLimits() {
    GatewayConfig.Server server = config().server();
    assertThat(server.headerTimeoutMs()).isEqualTo(10_000);
    assertThat(server.bodyTimeoutMs()).isEqualTo(30_000);
    assertThat(server.idleTimeoutMs()).isEqualTo(60_000);
    assertThat(server.maxConnections()).isEqualTo(10_000);
    assertThatThrownBy(() -> config("gateway.header.timeout.ms", "0")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("gateway.header.timeout.ms");
  }

  @Test
  void shouldGroupEachSettingUnderItsConcern() {
    GatewayConfig c = config("topic.prefix", "x", "http.port", "9090", "gateway.max.in.flight", "7",
        "gateway.demand.interval.ms", "0", "gateway.readiness", "any");

    assertThat(c.kafka().topicPrefix()).isEqualTo("x");
    assertThat(c.kafka().bootstrapServers()).isEqualTo(c.kafka().clients().getProperty("bootstrap.servers"));
    assertThat(c.server().httpPort()).isEqualTo(9090);
    assertThat(c.limits().maxInFlight()).isEqualTo(7);
    assertThat(c.limits().timeoutMs()).isEqualTo(30_000);
    assertThat(c.steering().demandIntervalMs()).isZero();
    assertThat(c.steering().readiness()).isEqualTo(io.partita.gateway.health.CatalogReadiness.Mode.ANY);
  }
}

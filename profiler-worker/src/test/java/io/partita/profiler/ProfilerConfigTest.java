package io.partita.profiler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import io.partita.profiler.idle.IdleSettings;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The idle-check and metrics settings: defaults, values, and refusals that name the key. */
class ProfilerConfigTest {

  private static ProfilerConfig config(Map<String, String> more) {
    Map<String, String> s = new HashMap<>(Map.of("kafka.bootstrap.servers", "localhost:9092", "model.repo", "/models",
        "host.id", "h1"));
    s.putAll(more);
    return ProfilerConfig.from(Settings.of(s));
  }

  @Test
  void shouldCheckForIdleSlotsByDefaultAndServeNoMetricsPort() {
    ProfilerConfig c = config(Map.of());

    assertThat(c.idle()).isEqualTo(IdleSettings.defaults());
    assertThat(c.metricsPort()).isZero();
  }

  @Test
  void shouldReadTheIdleSettings() {
    ProfilerConfig c = config(Map.of("profiler.idle.check", "on", "profiler.idle.max-in-flight", "2",
        "profiler.idle.max-rate", "0.5", "profiler.idle.wait.ms", "1000", "profiler.idle.stale.ms", "20000",
        "profiler.metrics.port", "9464"));

    assertThat(c.idle()).isEqualTo(new IdleSettings(true, 2, 0.5, 1000, 20_000));
    assertThat(c.metricsPort()).isEqualTo(9464);
  }

  @Test
  void shouldReadNamedDimensionSizesAndRefuseBadOnesNamingTheKey() {
    assertThat(config(Map.of()).dims()).isEmpty();
    assertThat(config(Map.of("profiler.dims", "width=160, height=48")).dims()).containsOnly(
        Map.entry("width", 160L), Map.entry("height", 48L));
    for (String bad : new String[] {"width", "width=0", "width=wide", "=5"}) {
      assertThatThrownBy(() -> config(Map.of("profiler.dims", bad))).as(bad)
          .isInstanceOf(ConfigException.class).hasMessageContaining("profiler.dims=" + bad).hasMessageContaining("NAME=SIZE");
    }
  }

  @Test
  void shouldRefuseABadIdleSettingNamingItsKey() {
    assertThatThrownBy(() -> config(Map.of("profiler.idle.max-rate", "fast")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("profiler.idle.max-rate=fast");
    assertThatThrownBy(() -> config(Map.of("profiler.idle.max-rate", "-1")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("profiler.idle.max-rate");
    assertThatThrownBy(() -> config(Map.of("profiler.idle.wait.ms", "-5")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("profiler.idle.wait.ms");
    assertThatThrownBy(() -> config(Map.of("profiler.metrics.port", "70000")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("profiler.metrics.port");
  }
}

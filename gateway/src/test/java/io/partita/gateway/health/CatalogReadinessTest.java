package io.partita.gateway.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.ConfigException;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CatalogReadinessTest {

  @Test
  void shouldBeReadyOnlyWhenEveryModelOfTheCatalogIsReadyByDefault() {
    Set<String> ready = new java.util.HashSet<>(Set.of("a", "b"));
    CatalogReadiness readiness = new CatalogReadiness(CatalogReadiness.Mode.parse("all"), () -> List.of("a", "b", "c"), ready::contains);

    assertThat(readiness.getAsBoolean()).isFalse();
    assertThat(readiness.notReady()).containsExactly("c");
    ready.add("c");
    assertThat(readiness.getAsBoolean()).isTrue();
    assertThat(readiness.notReady()).isEmpty();
  }

  @Test
  void shouldBeReadyWhenAnyModelIsReadyWhenRelaxed() {
    CatalogReadiness readiness = new CatalogReadiness(CatalogReadiness.Mode.parse(" ANY "), () -> List.of("a", "b"), "b"::equals);

    assertThat(readiness.getAsBoolean()).isTrue();
    assertThat(new CatalogReadiness(CatalogReadiness.Mode.ANY, () -> List.of("a"), m -> false).getAsBoolean()).isFalse();
  }

  @Test
  void shouldNeverBeReadyWithAnEmptyCatalog() {
    assertThat(new CatalogReadiness(CatalogReadiness.Mode.ALL, List::of, m -> true).getAsBoolean()).isFalse();
  }

  @Test
  void shouldNameTheSettingWhenTheModeIsUnknown() {
    assertThatThrownBy(() -> CatalogReadiness.Mode.parse("most")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("gateway.readiness=most").hasMessageContaining("'all'");
  }
}

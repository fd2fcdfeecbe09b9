package io.partita.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class ApiKeysTest {
  private final ApiKeys keys = ApiKeys.parse("gateway.api-keys", "all-key-123:*, demo-key-123:demo|demo-a");

  @Test
  void shouldAllowEverythingWhenNoKeysAreConfigured() {
    ApiKeys open = ApiKeys.parse("gateway.api-keys", " ");
    assertThat(open.isOpen()).isTrue();
    assertThat(open.check(null, "demo").allowed()).isTrue();
  }

  @Test
  void shouldAnswer401WithoutAKeyAnd403ForAnUnknownKey() {
    assertThat(keys.check(null, "demo").status()).isEqualTo(401);
    assertThat(keys.check("", null).status()).isEqualTo(401);
    ApiKeys.Decision unknown = keys.check("nope-nope-123", "demo");
    assertThat(unknown.status()).isEqualTo(403);
    assertThat(unknown.message()).doesNotContain("nope-nope-123");
  }

  @Test
  void shouldLimitAKeyToItsModels() {
    assertThat(keys.check("demo-key-123", "demo-a").allowed()).isTrue();
    assertThat(keys.check("demo-key-123", "demo-b").status()).isEqualTo(403);
    assertThat(keys.check("demo-key-123", null).allowed()).isTrue();
    assertThat(keys.check("all-key-123", "demo-b").allowed()).isTrue();
  }

  @Test
  void shouldReadTheKeyFromBearerOrXApiKey() {
    assertThat(ApiKeys.presented("Bearer abc", null)).isEqualTo("abc");
    assertThat(ApiKeys.presented("bearer  abc ", "other")).isEqualTo("abc");
    assertThat(ApiKeys.presented(null, "xyz")).isEqualTo("xyz");
    assertThat(ApiKeys.presented("Basic dXNlcg==", "xyz")).isEqualTo("xyz");
    assertThat(ApiKeys.presented(null, " ")).isNull();
  }

  @Test
  void shouldRefuseMalformedSettingsWithoutShowingTheKey() {
    assertThatThrownBy(() -> ApiKeys.parse("gateway.api-keys", "secret-key-1"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("entry 1").hasMessageNotContaining("secret-key-1");
    assertThatThrownBy(() -> ApiKeys.parse("gateway.api-keys", "short:*"))
        .isInstanceOf(ConfigException.class).hasMessageContaining("shorter than 8");
  }
}

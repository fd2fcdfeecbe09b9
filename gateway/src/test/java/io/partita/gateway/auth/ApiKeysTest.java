package io.partita.gateway.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.partita.common.config.ConfigException;
import io.partita.gateway.server.HttpStatus;
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
    assertThat(HttpStatus.of(keys.check(null, "demo").kind())).isEqualTo(401);
    assertThat(HttpStatus.of(keys.check("", null).kind())).isEqualTo(401);
    ApiKeys.Decision unknown = keys.check("nope-nope-123", "demo");
    assertThat(HttpStatus.of(unknown.kind())).isEqualTo(403);
    assertThat(unknown.message()).doesNotContain("nope-nope-123");
  }

  @Test
  void shouldLimitAKeyToItsModels() {
    assertThat(keys.check("demo-key-123", "demo-a").allowed()).isTrue();
    assertThat(HttpStatus.of(keys.check("demo-key-123", "demo-b").kind())).isEqualTo(403);
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

  @Test
  void shouldLetAKeySeeOnlyWhatItSubmittedUnlessItMayUseEveryModel() {
    ApiKeys three = ApiKeys.parse("gateway.api-keys", "k1-key-0001:demo-a, k2-key-0002:demo-a|demo, all-key-0003:*");
    String k2 = three.owner("k2-key-0002");
    assertThat(k2).startsWith("sha256:").doesNotContain("k2-key-0002");
    assertThat(three.owner("k1-key-0001")).isNotEqualTo(k2);
    assertThat(three.owner("unknown-key-9")).isNull();
    assertThat(three.maySee("k2-key-0002", k2)).isTrue();
    assertThat(three.maySee("k1-key-0001", k2)).isFalse();
    assertThat(three.maySee("all-key-0003", k2)).isTrue();
    assertThat(three.maySee("unknown-key-9", k2)).isFalse();
    assertThat(three.maySee(null, k2)).isFalse();
    // Submitted while keys were off: only a key allowed every model sees it
    assertThat(three.maySee("k2-key-0002", null)).isFalse();
    assertThat(three.maySee("all-key-0003", null)).isTrue();
    // No keys configured: everyone sees everything, and nothing records an owner
    ApiKeys open = ApiKeys.open();
    assertThat(open.owner("anything-at-all")).isNull();
    assertThat(open.maySee(null, k2)).isTrue();
  }

  @Test
  void shouldCutALongModelNameInTheRefusal() {
    assertThat(keys.check("demo-key-123", "m".repeat(100_000)).message()).hasSizeLessThan(200);
  }
}

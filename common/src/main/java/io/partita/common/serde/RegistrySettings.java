package io.partita.common.serde;

import io.partita.common.config.ConfigException;
import io.partita.common.config.Settings;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;

/**
 * How to reach the schema registry in {@code serde.mode=registry}.
 *
 * @param url base of the Confluent-compatible API ({@code serde.registry.url}), e.g.
 *     {@code http://registry:8080/apis/ccompat/v7} for Apicurio Registry
 * @param compatibility compatibility level set on each subject before this process first
 *     registers a schema there ({@code serde.registry.compatibility}, default BACKWARD; NONE,
 *     BACKWARD, FORWARD, FULL and their _TRANSITIVE forms; {@code keep} leaves the registry's setting)
 * @param autoRegister register the writer's schema when it is new ({@code serde.registry.auto.register},
 *     default true); false only looks it up and fails when the subject does not hold it
 * @param timeout per-request timeout ({@code serde.registry.timeout.ms}, default 10000)
 * @param username basic-auth user ({@code serde.registry.username}), or null
 * @param password basic-auth password ({@code serde.registry.password}), or null
 */
public record RegistrySettings(URI url, String compatibility, boolean autoRegister, Duration timeout, String username, String password) {
  public static final String URL = "serde.registry.url";
  public static final String COMPATIBILITY = "serde.registry.compatibility";
  public static final String AUTO_REGISTER = "serde.registry.auto.register";
  public static final String TIMEOUT_MS = "serde.registry.timeout.ms";
  public static final String USERNAME = "serde.registry.username";
  public static final String PASSWORD = "serde.registry.password";
  public static final String KEEP = "KEEP";

  private static final Set<String> LEVELS = Set.of(
      "NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", KEEP);

  public RegistrySettings {
    if (url == null) {
      throw new ConfigException(URL + ": missing; serde.mode=registry needs the registry's Confluent-compatible API, e.g. http://registry:8080/apis/ccompat/v7");
    }
    if (!"http".equals(url.getScheme()) && !"https".equals(url.getScheme())) {
      throw new ConfigException(URL + "=" + url + ": not an http(s) URL");
    }
    if (!LEVELS.contains(compatibility)) {
      throw new ConfigException(COMPATIBILITY + "=" + compatibility + ": use one of " + LEVELS.stream().sorted().toList());
    }
    if ((username == null) != (password == null)) {
      throw new ConfigException(USERNAME + " and " + PASSWORD + ": set both or neither");
    }
  }

  /** Without the password, for logs. */
  @Override
  public String toString() {
    return "RegistrySettings[url=" + url + ", compatibility=" + compatibility + ", autoRegister=" + autoRegister
        + ", timeout=" + timeout + ", username=" + username + ", password=" + (password == null ? null : "****") + "]";
  }

  public static RegistrySettings of(String url) {
    return new RegistrySettings(URI.create(url), "BACKWARD", true, Duration.ofSeconds(10), null, null);
  }

  public static RegistrySettings from(Settings settings) {
    String url = settings.string(URL, null);
    URI uri;
    try {
      uri = url == null ? null : URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(URL + "=" + url + ": not a URL (" + e.getMessage() + ")");
    }
    return new RegistrySettings(
        uri,
        settings.string(COMPATIBILITY, "BACKWARD").toUpperCase(Locale.ROOT),
        settings.bool(AUTO_REGISTER, true),
        Duration.ofMillis(settings.longValue(TIMEOUT_MS, 10_000, 100, 600_000)),
        settings.string(USERNAME, null),
        settings.string(PASSWORD, null));
  }
}

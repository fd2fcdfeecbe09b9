package io.partita.gateway.auth;

import io.partita.common.config.ConfigException;
import io.partita.gateway.refusal.Refusal;
import io.partita.gateway.refusal.Refusal.Kind;
import io.partita.gateway.refusal.SafeText;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * API keys and the service models each may call, from {@code gateway.api-keys}: comma-separated
 * {@code key:model1|model2} entries, {@code key:*} for every model. No keys means the gateway is
 * open. A key is presented as {@code Authorization: Bearer <key>} or {@code X-API-Key: <key>}.
 * Keys are compared in constant time, and never logged or echoed.
 */
public final class ApiKeys {
  /**
   * The outcome of a check: allowed, or the kind of refusal ({@link Kind#UNAUTHORIZED} without a
   * key, {@link Kind#FORBIDDEN} for a key not known or not allowed the model) and its message.
   */
  public record Decision(boolean allowed, Kind kind, String message) {
    static final Decision ALLOW = new Decision(true, null, null);

    /** The refusal to answer with; only for a decision that is not {@link #allowed}. */
    public Refusal refused() {
      if (allowed) {
        throw new IllegalStateException("an allowed call is not refused");
      }
      return new Refusal(kind, message);
    }
  }

  private record Entry(byte[] key, boolean all, Set<String> models) {}

  private final List<Entry> entries;

  private ApiKeys(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  public static ApiKeys open() {
    return new ApiKeys(List.of());
  }

  /** Parses the setting; {@code name} is the key it came from, for the error message. */
  public static ApiKeys parse(String name, String value) {
    List<Entry> entries = new ArrayList<>();
    if (value == null || value.isBlank()) {
      return new ApiKeys(entries);
    }
    String[] parts = value.split(",");
    for (int i = 0; i < parts.length; i++) {
      String part = parts[i].strip();
      int colon = part.lastIndexOf(':');
      if (part.isEmpty() || colon <= 0 || colon == part.length() - 1) {
        throw new ConfigException(name + ": entry " + (i + 1) + " is not KEY:MODEL|MODEL or KEY:*"
            + " (the entries are comma-separated; the key itself is not shown)");
      }
      String key = part.substring(0, colon).strip();
      String models = part.substring(colon + 1).strip();
      if (key.length() < 8) {
        throw new ConfigException(name + ": entry " + (i + 1) + " has a key shorter than 8 characters; use a long random key");
      }
      boolean all = models.equals("*");
      Set<String> allowed = all ? Set.of() : Set.of(models.split("\\|"));
      entries.add(new Entry(key.getBytes(StandardCharsets.UTF_8), all, allowed));
    }
    return new ApiKeys(entries);
  }

  public boolean isOpen() {
    return entries.isEmpty();
  }

  public int size() {
    return entries.size();
  }

  /** The key from the {@code Authorization: Bearer} or {@code X-API-Key} header value, or null. */
  public static String presented(String authorization, String xApiKey) {
    if (authorization != null) {
      String a = authorization.strip();
      if (a.length() > 7 && a.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
        return a.substring(7).strip();
      }
    }
    return xApiKey == null || xApiKey.isBlank() ? null : xApiKey.strip();
  }

  /**
   * Whether the presented key (may be null) may act on {@code model}; a null model asks only
   * whether the key is known (endpoints not tied to one model).
   */
  public Decision check(String presentedKey, String model) {
    if (entries.isEmpty()) {
      return Decision.ALLOW;
    }
    if (presentedKey == null || presentedKey.isEmpty()) {
      return new Decision(false, Kind.UNAUTHORIZED, "an API key is required: send Authorization: Bearer <key> or X-API-Key: <key>");
    }
    byte[] given = presentedKey.getBytes(StandardCharsets.UTF_8);
    Entry match = null;
    for (Entry e : entries) { // every entry is compared, so the time does not tell which matched
      if (MessageDigest.isEqual(e.key, given) && match == null) {
        match = e;
      }
    }
    if (match == null) {
      return new Decision(false, Kind.FORBIDDEN, "the API key is not known");
    }
    if (model == null || match.all || match.models.contains(model)) {
      return Decision.ALLOW;
    }
    return new Decision(false, Kind.FORBIDDEN, "the API key may not use model '" + SafeText.name(model) + "'");
  }

  /**
   * The owner recorded on what this key submits (batch jobs): {@code sha256:<hex>} of the key, so
   * the key itself is never written to Kafka. Null when no keys are configured or the key is not
   * one of them.
   */
  public String owner(String presentedKey) {
    if (entries.isEmpty() || known(presentedKey) == null) {
      return null;
    }
    return digest(presentedKey);
  }

  /** Whether this key sees everything anyone submitted: keys are off, or the key is allowed {@code *}. */
  public boolean seesAll(String presentedKey) {
    if (entries.isEmpty()) {
      return true;
    }
    Entry e = known(presentedKey);
    return e != null && e.all;
  }

  /**
   * Whether this key may see a thing submitted by {@code owner} (a value of {@link #owner}, or
   * null for things submitted while keys were off): its own, or anything for a key that
   * {@link #seesAll}. Ownerless things are seen only by such keys.
   */
  public boolean maySee(String presentedKey, String owner) {
    if (seesAll(presentedKey)) {
      return true;
    }
    return owner != null && known(presentedKey) != null
        && MessageDigest.isEqual(owner.getBytes(StandardCharsets.UTF_8), digest(presentedKey).getBytes(StandardCharsets.UTF_8));
  }

  private Entry known(String presentedKey) {
    if (presentedKey == null || presentedKey.isEmpty()) {
      return null;
    }
    byte[] given = presentedKey.getBytes(StandardCharsets.UTF_8);
    Entry match = null;
    for (Entry e : entries) {
      if (MessageDigest.isEqual(e.key, given) && match == null) {
        match = e;
      }
    }
    return match;
  }

  private static String digest(String key) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update("partita-owner:".getBytes(StandardCharsets.UTF_8));
      byte[] d = sha.digest(key.getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(d);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}

package io.partita.gateway.infer;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The request id of an infer call, HTTP's {@code X-Request-Id} and gRPC's {@code x-request-id}
 * alike: the caller's when it is usable (1 to 128 visible ASCII characters), else a new one. A new
 * id is this gateway's random prefix, drawn once per process, and a counter: unique among the
 * gateway's calls and apart from any other gateway's, without a draw from {@link SecureRandom} per
 * call as {@code UUID.randomUUID} makes (a lock and a hash on every call that sends no id).
 */
public final class RequestIds {
  private static final String PREFIX = randomPrefix();
  private static final AtomicLong NEXT = new AtomicLong();

  private RequestIds() {}

  /** {@code presented} when it is a usable id, else a new one. */
  public static String orNew(String presented) {
    return usable(presented) ? presented : PREFIX + Long.toString(NEXT.incrementAndGet(), 36);
  }

  /** Whether a caller's id can be used as it is: 1 to 128 characters, each visible ASCII ({@code !} to {@code ~}). */
  static boolean usable(String id) {
    if (id == null || id.isEmpty() || id.length() > 128) {
      return false;
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  private static String randomPrefix() {
    byte[] bytes = new byte[8];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes) + "-";
  }
}

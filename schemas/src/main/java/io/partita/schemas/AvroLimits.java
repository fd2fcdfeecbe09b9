package io.partita.schemas;

import org.apache.avro.SystemLimitException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Avro's own decode limits ({@code org.apache.avro.limits.*}, raising {@link SystemLimitException}),
 * set on purpose for every Partita process.
 *
 * <p>Avro 1.12 reads these system properties once, in {@code SystemLimitException}'s static
 * initializer, so they must be set before the first Avro decode in the JVM; {@link AvroCodec}
 * calls {@link #install()} from its own static initializer, which runs before any Partita reader
 * decodes. A value the operator already set (a {@code -D} flag) is kept. Without them Avro allows
 * 2,147,483,639 of everything, so a 32-byte record can ask for a 2-billion-element array.
 *
 * <p>Why these bounds are safe: they are far above anything a Partita record carries (a Kafka record
 * is 1 MiB by default; raise {@code message.max.bytes} past 64 MiB and raise these with it), and they
 * are only the outer bound. Partita's readers decode through {@link BoundedDecoder}, which also
 * refuses any length or count larger than the bytes left in the record, so what one record makes the
 * decoder allocate stays a small multiple of the record's own size whatever these say.
 */
public final class AvroLimits {
  /** Longest {@code bytes} value (a tensor's raw data) in bytes. */
  public static final int DEFAULT_MAX_BYTES = 64 << 20;
  /** Longest string in bytes (names, messages, parameters). */
  public static final int DEFAULT_MAX_STRING = 16 << 20;
  /** Most items in one array or map (summed over its blocks). */
  public static final int DEFAULT_MAX_COLLECTION_ITEMS = 16 << 20;

  private static final Logger log = LoggerFactory.getLogger(AvroLimits.class);
  private static volatile boolean installed;

  private AvroLimits() {}

  /** Sets the limits that are not set yet; idempotent. */
  public static synchronized void install() {
    if (installed) {
      return;
    }
    setIfAbsent(SystemLimitException.MAX_BYTES_LENGTH_PROPERTY, DEFAULT_MAX_BYTES);
    setIfAbsent(SystemLimitException.MAX_STRING_LENGTH_PROPERTY, DEFAULT_MAX_STRING);
    setIfAbsent(SystemLimitException.MAX_COLLECTION_LENGTH_PROPERTY, DEFAULT_MAX_COLLECTION_ITEMS);
    installed = true;
    // The class initializes here if nothing decoded before; if something did, its limits were read
    // earlier and stay Avro's defaults: say so, since only BoundedDecoder then bounds the readers.
    if (!limitsApplied()) {
      log.warn("Avro's decode limits were read before Partita set them (something decoded Avro earlier); "
          + "set -D{}, -D{} and -D{} on the command line. Partita's readers stay bounded by the record size.",
          SystemLimitException.MAX_BYTES_LENGTH_PROPERTY, SystemLimitException.MAX_STRING_LENGTH_PROPERTY,
          SystemLimitException.MAX_COLLECTION_LENGTH_PROPERTY);
    }
  }

  /** Whether Avro's effective bytes limit is the configured one (not Avro's 2 GiB default). */
  static boolean limitsApplied() {
    long configured = configured(SystemLimitException.MAX_BYTES_LENGTH_PROPERTY, DEFAULT_MAX_BYTES);
    if (configured >= Integer.MAX_VALUE - 8) {
      return true;
    }
    try {
      SystemLimitException.checkMaxBytesLength(configured + 1);
      return false;
    } catch (SystemLimitException e) {
      return true;
    }
  }

  /** The effective value of one limit property (what Avro reads). */
  public static long configured(String property, int fallback) {
    String value = System.getProperty(property);
    if (value == null) {
      return fallback;
    }
    try {
      return Integer.parseUnsignedInt(value.strip());
    } catch (NumberFormatException e) {
      return Integer.MAX_VALUE - 8;
    }
  }

  private static void setIfAbsent(String property, int value) {
    if (System.getProperty(property) == null) {
      System.setProperty(property, Integer.toString(value));
    }
  }
}

package io.partita.common.config;

/** A setting that is missing or wrong; the message names the key and how to fix it. */
public final class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }
}

package io.partita.gateway.health;

import io.partita.common.config.ConfigException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The server's readiness as Triton means it: with {@link Mode#ALL} (the default) the server is
 * ready only when every model of the catalog has a ready instance; with {@link Mode#ANY} when at
 * least one has. An empty catalog is never ready (there is nothing to serve yet). Per-model
 * readiness is the caller's predicate and is not changed by this class. No transport, no Kafka: it
 * reads a catalog and a predicate each time it is asked.
 */
public final class CatalogReadiness implements BooleanSupplier, Readiness.Check {

  /** {@code gateway.readiness}: how many of the catalog's models must be ready. */
  public enum Mode {
    ALL, ANY;

    public String setting() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code gateway.readiness}; the error names the setting and its values. */
    public static Mode parse(String value) {
      for (Mode mode : values()) {
        if (mode.setting().equals(value == null ? "" : value.strip().toLowerCase(Locale.ROOT))) {
          return mode;
        }
      }
      throw new ConfigException("gateway.readiness=" + value + ": must be 'all' (ready when every model of the "
          + "catalog has a ready instance, as Triton) or 'any' (ready when at least one has)");
    }
  }

  private final Mode mode;
  private final Supplier<? extends Collection<String>> catalog;
  private final Predicate<String> modelReady;

  /**
   * @param catalog the service models the gateway serves, read on every call
   * @param modelReady whether one service model has a ready instance
   */
  public CatalogReadiness(Mode mode, Supplier<? extends Collection<String>> catalog, Predicate<String> modelReady) {
    this.mode = mode;
    this.catalog = catalog;
    this.modelReady = modelReady;
  }

  @Override
  public boolean getAsBoolean() {
    Collection<String> models = catalog.get();
    if (models.isEmpty()) {
      return false;
    }
    return mode == Mode.ALL ? models.stream().allMatch(modelReady) : models.stream().anyMatch(modelReady);
  }

  /** As a server check of {@link Readiness}: empty when ready, else the models not ready (at most 5 named). */
  @Override
  public Optional<String> problem() {
    if (getAsBoolean()) {
      return Optional.empty();
    }
    List<String> missing = notReady();
    if (missing.isEmpty()) {
      return Optional.of("the catalog has no service model yet");
    }
    String named = String.join(", ", missing.subList(0, Math.min(5, missing.size())))
        + (missing.size() > 5 ? " and " + (missing.size() - 5) + " more" : "");
    return Optional.of(mode == Mode.ALL
        ? missing.size() + " model(s) of the catalog have no ready instance (gateway.readiness=all): " + named
        : "no model of the catalog has a ready instance (gateway.readiness=any)");
  }

  /** The catalog's models that have no ready instance now, in catalog order (for messages). */
  public List<String> notReady() {
    List<String> out = new ArrayList<>();
    for (String m : catalog.get()) {
      if (!modelReady.test(m)) {
        out.add(m);
      }
    }
    return out;
  }

  public Mode mode() {
    return mode;
  }
}

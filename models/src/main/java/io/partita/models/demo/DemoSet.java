package io.partita.models.demo;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Which demo models a repository gets ({@link DemoRepository#writeTo(java.nio.file.Path, DemoSet)}).
 *
 * <ul>
 *   <li>{@link #LOCAL}: {@code demo-mlp} alone, what {@code partita local} serves: tiny, so a start
 *       and every test that writes the demo repository stay fast.
 *   <li>{@link #CLUSTER}: {@code demo-mlp} and {@code demo-heavy} ({@link DemoHeavy}), whose two
 *       versions differ about tenfold in cost and whose service model asks for the most accurate
 *       version that meets its latency objective, so hosts of different speeds choose different
 *       versions.
 * </ul>
 */
public enum DemoSet {
  LOCAL(List.of(DemoMlp.MODEL_NAME)),
  CLUSTER(List.of(DemoMlp.MODEL_NAME, DemoHeavy.MODEL_NAME));

  private final List<String> models;

  DemoSet(List<String> models) {
    this.models = models;
  }

  /** The model directories the set writes. */
  public List<String> models() {
    return models;
  }

  /** The set of a name ({@code local}, {@code cluster}; case-insensitive). */
  public static DemoSet parse(String name) {
    for (DemoSet s : values()) {
      if (s.name().equalsIgnoreCase(name.strip())) {
        return s;
      }
    }
    throw new IllegalArgumentException("no demo set '" + name + "'; there are "
        + Arrays.stream(values()).map(s -> s.name().toLowerCase(Locale.ROOT)).toList());
  }
}

package io.partita.planning.version;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What version choice optimises among the versions that meet a service's requirements.
 *
 * <ul>
 *   <li>{@link #LATENCY} (the default): the fastest, ties to the more accurate, then the smaller
 *       version id.
 *   <li>{@link #ACCURACY}: the most accurate (unknown accuracy lowest), ties to the faster, then the
 *       smaller version id. With a latency objective this is "the best version this host can run in
 *       time": a fast host takes the accurate version, a slow one the cheaper version.
 * </ul>
 */
public enum VersionObjective {
  LATENCY,
  ACCURACY;

  /** The name used in manifests and records: {@code latency} or {@code accuracy}. */
  public String text() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Every accepted name, for error messages. */
  public static List<String> choices() {
    return Arrays.stream(values()).map(VersionObjective::text).toList();
  }

  /** The objective of a name ({@code latency}, {@code accuracy}; case-insensitive), or empty. */
  public static Optional<VersionObjective> parse(String text) {
    if (text == null) {
      return Optional.empty();
    }
    for (VersionObjective o : values()) {
      if (o.text().equals(text.strip().toLowerCase(Locale.ROOT))) {
        return Optional.of(o);
      }
    }
    return Optional.empty();
  }
}

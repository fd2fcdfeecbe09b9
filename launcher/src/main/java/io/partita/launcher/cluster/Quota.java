package io.partita.launcher.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * CPU quotas in cores ({@code 0.6} = 60% of one core), as {@code --worker-cpus} and
 * {@code --cpus} take them, and as cgroup v1's {@code cpu.cfs_quota_us} holds them (a share of
 * {@code cpu.cfs_period_us}: {@code 0.6} is 6 ms in every 10).
 */
public final class Quota {
  /**
   * The period a quota is enforced over, 10 ms (cgroup v1's default is 100 ms). A host with 0.2 of
   * a core then runs 2 ms in every 10 rather than 20 in every 100, so a burst of work runs at full
   * speed for 2 ms at most before the host is held back. A measurement shorter than that still
   * does not see the quota (the profiler's baseline score is the same at 0.6 and 0.2).
   */
  public static final long PERIOD_US = 10_000;
  /** The kernel refuses quotas under 1 ms; a smaller share gets a longer period. */
  static final long MIN_QUOTA_US = 1_000;
  public static final double MIN = 0.01;

  private Quota() {}

  /** One quota, e.g. {@code 0.6}; an error names {@code flag} and the value. */
  public static double parse(String flag, String text) {
    double q;
    try {
      q = Double.parseDouble(text.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + ": '" + text.strip() + "' is not a number of cores (e.g. 0.6 for 60% of a core)");
    }
    if (!Double.isFinite(q) || q < MIN) {
      throw new IllegalArgumentException(flag + ": " + text.strip() + " is not a quota: give at least " + MIN + " of a core");
    }
    return q;
  }

  /** A comma-separated list, e.g. {@code 0.6,0.2}. */
  public static List<Double> parseList(String flag, String text) {
    List<Double> out = new ArrayList<>();
    for (String part : text.split(",", -1)) {
      if (part.isBlank()) {
        throw new IllegalArgumentException(flag + ": '" + text + "' has an empty entry; give quotas like 0.6,0.2");
      }
      out.add(parse(flag, part));
    }
    return out;
  }

  /** The period for a quota of {@code cores}: {@link #PERIOD_US}, longer when the quota would fall under 1 ms. */
  public static long periodMicros(double cores) {
    return Math.max(PERIOD_US, (long) Math.ceil(MIN_QUOTA_US / cores));
  }

  /** {@code cpu.cfs_quota_us} for {@code cores}, over {@link #periodMicros}. */
  public static long quotaMicros(double cores) {
    return Math.round(cores * periodMicros(cores));
  }

  public static double cores(long quotaMicros, long periodMicros) {
    return quotaMicros < 0 ? 0 : (double) quotaMicros / periodMicros;
  }

  /** {@code 0.6}, {@code 0.25}, {@code 1}: at most two decimals, no trailing zeros. */
  public static String format(double cores) {
    String s = String.format(Locale.ROOT, "%.2f", cores);
    s = s.replaceAll("0+$", "");
    return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
  }
}

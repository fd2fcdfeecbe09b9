package io.partita.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * Reads this process's cgroup files: the unified (v2) hierarchy first, then the v1 controller's.
 *
 * <p>Files are read under a root directory ({@code /} live, a fixture directory in tests). The
 * process's own cgroup is found from /proc/self/cgroup; when its path does not exist under the
 * mount (a container's namespaced view), the mount's root files are read instead. Only the
 * process's own cgroup is read, not its ancestors: a tighter limit set on a parent is missed. A
 * missing file means no limit.
 *
 * <p>The profiler reads the CPU quota into the host's environment; the worker reads it to turn the
 * CPU an item costs into the time it takes of the host's budget.
 */
public final class Cgroups {
  private final Path root;

  public Cgroups(Path root) {
    this.root = root;
  }

  /** This process's cgroups. */
  public static Cgroups live() {
    return new Cgroups(Path.of("/"));
  }

  /** The CPU quota in CPUs: v2 {@code cpu.max} first, then the v1 CFS quota; empty when unlimited. */
  public OptionalDouble cpuQuota() {
    Optional<String> max = value("", "cpu.max");
    if (max.isPresent()) {
      return cpuMaxV2(max.get());
    }
    for (String controller : List.of("cpu,cpuacct", "cpu")) {
      for (String dir : dirs(controller)) {
        Optional<String> quota = read(dir + "/cpu.cfs_quota_us");
        Optional<String> period = read(dir + "/cpu.cfs_period_us");
        if (quota.isPresent() && period.isPresent()) {
          return cfsQuotaV1(quota.get(), period.get());
        }
      }
    }
    return OptionalDouble.empty();
  }

  /**
   * The text of {@code file} of {@code controller} ("" for the v2 unified hierarchy): from the
   * process's own cgroup, else from the mount's root; empty when neither has it.
   */
  public Optional<String> value(String controller, String file) {
    for (String dir : dirs(controller)) {
      Optional<String> text = read(dir + "/" + file);
      if (text.isPresent()) {
        return text;
      }
    }
    return Optional.empty();
  }

  /** cgroup v2 {@code cpu.max}: {@code "max 100000"} is no limit, {@code "150000 100000"} is 1.5 CPUs. */
  public static OptionalDouble cpuMaxV2(String cpuMax) {
    String[] parts = cpuMax.trim().split("\\s+");
    if (parts.length == 0 || parts[0].isEmpty()) {
      throw new IllegalArgumentException("empty cpu.max");
    }
    if (parts[0].equals("max")) {
      return OptionalDouble.empty();
    }
    long quota = Long.parseLong(parts[0]);
    long period = parts.length > 1 ? Long.parseLong(parts[1]) : 100_000L;
    return quotaCores(quota, period);
  }

  /** cgroup v1 {@code cpu.cfs_quota_us} and {@code cpu.cfs_period_us}: a quota of -1 is no limit. */
  public static OptionalDouble cfsQuotaV1(String quotaUs, String periodUs) {
    long quota = Long.parseLong(quotaUs.trim());
    long period = Long.parseLong(periodUs.trim());
    return quota < 0 ? OptionalDouble.empty() : quotaCores(quota, period);
  }

  private static OptionalDouble quotaCores(long quota, long period) {
    if (period <= 0) {
      throw new IllegalArgumentException("cgroup CPU period must be positive, got " + period);
    }
    return OptionalDouble.of((double) quota / period);
  }

  /**
   * Candidate directories for a controller ("" for the v2 unified hierarchy): the process's own
   * cgroup under the mount, then the mount's root.
   */
  private List<String> dirs(String controller) {
    String mount = controller.isEmpty() ? "sys/fs/cgroup" : "sys/fs/cgroup/" + controller;
    List<String> dirs = new ArrayList<>();
    read("proc/self/cgroup").ifPresent(text -> {
      for (String line : text.split("\n")) {
        String[] parts = line.split(":", 3);
        if (parts.length < 3) {
          continue;
        }
        boolean matches = controller.isEmpty()
            ? parts[0].equals("0") && parts[1].isEmpty()
            : List.of(parts[1].split(",")).containsAll(List.of(controller.split(",")));
        String path = parts[2].strip();
        if (matches && !path.equals("/") && !path.isEmpty()) {
          dirs.add(mount + path);
        }
      }
    });
    dirs.add(mount);
    return dirs;
  }

  private Optional<String> read(String relative) {
    Path file = root.resolve(relative);
    try {
      return Files.isRegularFile(file) ? Optional.of(Files.readString(file, StandardCharsets.UTF_8)) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}

package io.partita.profiler.env;

import io.partita.runtime.CpuList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/** Parsers for the small /proc and cgroup files the probe reads. Pure: they take the file's text. */
public final class ProcFiles {

  private ProcFiles() {}

  /** Parses a CPU list such as {@code 0-3,8,10-11} into sorted, distinct CPU ids. */
  public static List<Integer> parseCpuList(String list) {
    return CpuList.parse(list);
  }

  /** The value of {@code key:} in a /proc status-style file, trimmed; empty if absent. */
  static Optional<String> field(String text, String key) {
    for (String line : text.split("\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).trim().equals(key)) {
        return Optional.of(line.substring(colon + 1).trim());
      }
    }
    return Optional.empty();
  }

  /** {@code Cpus_allowed_list} of /proc/self/status: the CPUs this process may run on. */
  public static List<Integer> allowedCpus(String procSelfStatus) {
    return parseCpuList(field(procSelfStatus, "Cpus_allowed_list")
        .orElseThrow(() -> new IllegalArgumentException("no Cpus_allowed_list in /proc/self/status")));
  }

  /** A {@code kB} field of /proc/meminfo or /proc/self/status, in bytes (e.g. MemTotal, VmRSS). */
  public static OptionalLong kibField(String text, String key) {
    return field(text, key)
        .map(v -> v.replace("kB", "").trim())
        .map(v -> OptionalLong.of(Long.parseLong(v) * 1024))
        .orElse(OptionalLong.empty());
  }

  /**
   * A cgroup memory limit: v2 {@code memory.max} ("max" is none) or v1
   * {@code memory.limit_in_bytes} (v1 writes a huge page-aligned number for none, so anything at
   * or above the machine's memory counts as no limit).
   */
  public static OptionalLong memoryLimit(String value, long machineMemoryBytes) {
    String v = value.trim();
    if (v.equals("max")) {
      return OptionalLong.empty();
    }
    long limit = Long.parseLong(v);
    return limit >= machineMemoryBytes ? OptionalLong.empty() : OptionalLong.of(limit);
  }

  /**
   * The CPUs a process can actually keep busy: the allowed CPUs, cut down to the CPU quota rounded
   * down (a quota of 1.5 CPUs gives one whole core; pinning threads to a second core would only
   * throttle them), never below one.
   */
  public static List<Integer> usableCpus(List<Integer> allowed, OptionalDouble quotaCores) {
    if (allowed.isEmpty()) {
      throw new IllegalArgumentException("no allowed CPUs");
    }
    int usable = allowed.size();
    if (quotaCores.isPresent()) {
      usable = (int) Math.max(1, Math.min(usable, Math.floor(quotaCores.getAsDouble() + 1e-9)));
    }
    return List.copyOf(allowed.subList(0, usable));
  }
}

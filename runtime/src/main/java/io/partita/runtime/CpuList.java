package io.partita.runtime;

import java.util.List;
import java.util.TreeSet;

/** The kernel's CPU list format ({@code 0-3,8,10-11}), as in cgroup cpusets and /proc status files. */
public final class CpuList {
  private CpuList() {}

  /** Parses a CPU list into sorted, distinct CPU ids; an empty list is empty. Bad entries are named. */
  public static List<Integer> parse(String list) {
    TreeSet<Integer> cpus = new TreeSet<>();
    String trimmed = list.strip();
    if (trimmed.isEmpty()) {
      return List.of();
    }
    for (String part : trimmed.split(",")) {
      String p = part.strip();
      try {
        int dash = p.indexOf('-');
        if (dash < 0) {
          cpus.add(Integer.parseInt(p));
        } else {
          int from = Integer.parseInt(p.substring(0, dash));
          int to = Integer.parseInt(p.substring(dash + 1));
          if (to < from) {
            throw new IllegalArgumentException("descending range '" + p + "' in CPU list '" + list + "'");
          }
          for (int c = from; c <= to; c++) {
            cpus.add(c);
          }
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("bad entry '" + p + "' in CPU list '" + list + "'", e);
      }
    }
    return List.copyOf(cpus);
  }
}

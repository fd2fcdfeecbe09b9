package io.partita.launcher.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which CPUs the infrastructure (brokers, planners, gateways) runs on and which the worker hosts
 * share, and where each worker host goes. The infrastructure takes the first quarter of the CPUs
 * (at least one: CPU 0 on a 2-core machine) so that its load never eats into a host's quota; the
 * rest are for worker hosts. A host with quota {@code Q} cores gets a cpuset of {@code ceil(Q)}
 * CPUs, each of which must have {@code Q / ceil(Q)} of a core left, so that every host can always
 * get its whole quota: quotas are never oversubscribed, or hosts would not differ in speed as their
 * quotas say. Pure: the CPUs come from the caller.
 *
 * @param infra CPUs of the brokers, planners and gateways
 * @param workers CPUs the worker hosts share
 */
public record CpuLayout(List<Integer> infra, List<Integer> workers) {
  private static final double EPSILON = 1e-9;

  public CpuLayout {
    infra = List.copyOf(infra);
    workers = List.copyOf(workers);
  }

  /** The layout for these online CPUs; with one CPU, infrastructure and hosts share it. */
  public static CpuLayout of(List<Integer> online) {
    if (online.isEmpty()) {
      throw new IllegalArgumentException("no CPU is available to this process");
    }
    List<Integer> sorted = online.stream().sorted().toList();
    if (sorted.size() == 1) {
      return new CpuLayout(sorted, sorted);
    }
    int infraCount = Math.max(1, sorted.size() / 4);
    return new CpuLayout(sorted.subList(0, infraCount), sorted.subList(infraCount, sorted.size()));
  }

  /** Whether infrastructure and worker hosts have CPUs of their own (at least two CPUs). */
  public boolean separate() {
    return infra.stream().noneMatch(workers::contains);
  }

  /**
   * Places hosts, in order, given those already placed. Each placed host has its cpuset and quota.
   *
   * @param placed hosts already running: their cpusets and quotas
   * @param wanted new hosts in order: name to quota (cores)
   * @return each new host's cpuset
   * @throws IllegalArgumentException naming the first host that does not fit, and why
   */
  public Map<String, List<Integer>> place(Map<String, Placement> placed, Map<String, Double> wanted) {
    Map<Integer, Double> load = new TreeMap<>();
    workers.forEach(c -> load.put(c, 0.0));
    placed.values().forEach(p -> p.cpus().forEach(c -> load.merge(c, p.quota() / p.cpus().size(), Double::sum)));
    Map<String, List<Integer>> out = new LinkedHashMap<>();
    for (Map.Entry<String, Double> host : wanted.entrySet()) {
      double quota = host.getValue();
      int k = (int) Math.ceil(quota - EPSILON);
      double each = quota / k;
      List<Integer> fits = new ArrayList<>(load.keySet().stream()
          .filter(c -> 1.0 - load.get(c) >= each - EPSILON)
          .sorted(Comparator.comparingDouble((Integer c) -> load.get(c)).thenComparing(c -> c))
          .toList());
      if (fits.size() < k) {
        double left = load.values().stream().mapToDouble(l -> Math.max(0, 1.0 - l)).sum();
        throw new IllegalArgumentException(String.format(Locale.ROOT,
            "%s needs %s of a core%s, but the CPUs for worker hosts (%s) have %s left%s; lower the quotas",
            host.getKey(), Quota.format(quota), k > 1 ? " (" + Quota.format(each) + " on each of " + k + " CPUs)" : "",
            cpuList(workers), Quota.format(left), separate() ? " (" + cpuList(infra) + " runs brokers, planners and gateways)" : ""));
      }
      List<Integer> cpus = fits.subList(0, k).stream().sorted().toList();
      cpus.forEach(c -> load.merge(c, each, Double::sum));
      out.put(host.getKey(), cpus);
    }
    return out;
  }

  /** {@code CPU 1} or {@code CPUs 1-3} / {@code CPUs 1,3}. */
  public static String cpuList(List<Integer> cpus) {
    return (cpus.size() == 1 ? "CPU " : "CPUs ") + cpuset(cpus);
  }

  /** The cpuset form: {@code 1}, {@code 1-3}, {@code 0,2}. */
  public static String cpuset(List<Integer> cpus) {
    List<Integer> sorted = cpus.stream().sorted().toList();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < sorted.size(); i++) {
      int start = sorted.get(i);
      int end = start;
      while (i + 1 < sorted.size() && sorted.get(i + 1) == end + 1) {
        end = sorted.get(++i);
      }
      b.append(b.length() == 0 ? "" : ",").append(start == end ? String.valueOf(start) : start + "-" + end);
    }
    return b.toString();
  }

  /** Parses the cpuset form ({@code 0-1,3}). */
  public static List<Integer> parseCpuset(String text) {
    List<Integer> out = new ArrayList<>();
    for (String part : text.strip().split(",")) {
      if (part.isBlank()) {
        continue;
      }
      int dash = part.indexOf('-');
      int from = Integer.parseInt(part.substring(0, dash < 0 ? part.length() : dash).strip());
      int to = dash < 0 ? from : Integer.parseInt(part.substring(dash + 1).strip());
      for (int c = from; c <= to; c++) {
        out.add(c);
      }
    }
    return out;
  }

  /** A host already placed: its cpuset and quota in cores. */
  public record Placement(List<Integer> cpus, double quota) {}
}

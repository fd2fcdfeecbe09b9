package io.partita.launcher.cluster;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;

/**
 * The pure part of a cluster: from the spec and the shared settings to the environment every
 * process gets, each group's address, ports and cgroup, and each process's java command line.
 * No file, process or network is touched here.
 */
public final class ClusterPlan {
  /** Ports inside a namespace: each group has its own address, so every group uses the same ones. */
  public static final int BROKER_PORT = 9092;
  public static final int CONTROLLER_PORT = 9093;
  public static final int HTTP_PORT = 8080;
  public static final int GRPC_PORT = 8001;
  /** Budget per measured point when a profiler profiles the repository at start ({@code partita local}'s). */
  public static final long PROFILE_BUDGET_MS = 100;
  public static final String MAIN_CLASS = "io.partita.launcher.Partita";

  /** Replication settings capped at the broker count, with the min ISR settings that go with them. */
  private static final List<String> REPLICATION = List.of("KAFKA_DEFAULT_REPLICATION_FACTOR",
      "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
      "PARTITA_TOPICS_REPLICATION", "PARTITA_PLANNER_REPLICATION_FACTOR");
  private static final List<String> MIN_ISR = List.of("KAFKA_MIN_INSYNC_REPLICAS", "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR");
  /** Compose-only settings the cluster sets per process instead (by flag). */
  private static final List<String> PER_PROCESS = List.of("PARTITA_KAFKA_BOOTSTRAP_SERVERS", "PARTITA_MODEL_REPO");

  private ClusterPlan() {}

  /**
   * The environment of every process: the shared settings, with replication capped at the number of
   * brokers (a replication factor above it cannot be met; the min ISR becomes at most the factor
   * less one, at least 1) and the per-process settings removed. What was changed is added to
   * {@code notes}, to be said.
   */
  public static Map<String, String> environment(Map<String, String> shared, int brokers, List<String> notes) {
    Map<String, String> env = new LinkedHashMap<>(shared);
    PER_PROCESS.forEach(env::remove);
    int rf = 0;
    List<String> capped = new ArrayList<>();
    for (String key : REPLICATION) {
      int value = intValue(env, key, 3);
      int used = Math.min(value, brokers);
      env.put(key, Integer.toString(used));
      rf = Math.max(rf, used);
      if (used != value) {
        capped.add(key + " " + value + " -> " + used);
      }
    }
    for (String key : MIN_ISR) {
      int value = intValue(env, key, 2);
      int used = Math.max(1, Math.min(value, rf - 1));
      env.put(key, Integer.toString(used));
      if (used != value) {
        capped.add(key + " " + value + " -> " + used);
      }
    }
    if (!capped.isEmpty()) {
      notes.add("with " + brokers + " broker" + (brokers == 1 ? "" : "s") + " the replication factor is " + rf
          + " and the min ISR " + env.get("KAFKA_MIN_INSYNC_REPLICAS") + ", not what the settings file says ("
          + String.join(", ", capped) + "): one broker down " + (rf >= 3 ? "is survived" : "stops writes"));
    }
    return env;
  }

  private static int intValue(Map<String, String> env, String key, int fallback) {
    String v = env.get(key);
    if (v == null || v.isBlank()) {
      return fallback;
    }
    try {
      return Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + "=" + v + " in the settings file: not a whole number");
    }
  }

  /** The first three bytes of a /24 of 198.18.0.0/15, by its 9-bit number. */
  public static String subnet(int index) {
    int i = Math.floorMod(index, 512);
    return "198." + (18 + i / 256) + "." + (i % 256);
  }

  /**
   * One group: its address and ports (fixed in a namespace; free loopback ports from
   * {@code freePort} otherwise), its namespace, veth and cgroup names, its cpuset and base quota.
   */
  public static GroupRecord group(ClusterNames names, NetworkMode mode, String subnet, GroupKind kind, int index,
      List<Integer> cpus, double quota, IntSupplier freePort) {
    String name = kind.groupName(index);
    int slot = kind.slot(index);
    boolean netns = mode == NetworkMode.NETNS;
    Map<String, Integer> ports = new LinkedHashMap<>();
    switch (kind) {
      case BROKER -> {
        ports.put("client", netns ? BROKER_PORT : freePort.getAsInt());
        ports.put("controller", netns ? CONTROLLER_PORT : freePort.getAsInt());
      }
      case GATEWAY -> {
        ports.put("http", netns ? HTTP_PORT : freePort.getAsInt());
        ports.put("grpc", netns ? GRPC_PORT : freePort.getAsInt());
      }
      default -> { }
    }
    return new GroupRecord(name, kind, index, slot, netns ? subnet + "." + slot : "127.0.0.1",
        netns ? names.namespace(name) : null, netns ? names.hostVeth(slot) : null, netns ? names.cgroup(name) : null,
        cpus, quota, ports);
  }

  /** The processes of a group, not started yet (pid 0), with their java command lines. */
  public static List<ProcessRecord> processes(ClusterState state, GroupRecord group) {
    List<ProcessRecord> out = new ArrayList<>();
    Path dir = Path.of(state.dir());
    for (Role role : group.kind().roles()) {
      String name = group.kind() == GroupKind.HOST ? group.name() + "-" + role : group.name();
      String hostId = group.kind() == GroupKind.HOST ? group.name() : null;
      // Serial GC, and the C1 compiler only but for the brokers (Role.optimizing): a dozen JVMs
      // share two cores, and a worker host has a fraction of one, so the JVM's own threads
      // (parallel GC workers, C2 compiling) would take the CPU the services need to start. A crash
      // report goes beside the process's log.
      List<String> argv = new ArrayList<>(List.of(state.javaBin(), "-Xmx" + role.maxHeap(), "-XX:+UseSerialGC"));
      if (!role.optimizing()) {
        argv.add("-XX:TieredStopAtLevel=1");
      }
      argv.addAll(List.of("-XX:-UsePerfData", "-XX:ErrorFile=" + dir.resolve("logs").resolve(name + "-hs_err_%p.log"),
          state.names().mark()));
      argv.addAll(state.javaOptions());
      argv.addAll(List.of("@" + state.argFile(), MAIN_CLASS, role.command()));
      argv.addAll(arguments(state, group, role, dir));
      out.add(new ProcessRecord(name, role, group.name(), hostId, 0, group.namespace(), group.cgroup(), group.address(),
          group.ports(), argv, dir.resolve("logs").resolve(name + ".log").toString()));
    }
    return out;
  }

  private static List<String> arguments(ClusterState state, GroupRecord group, Role role, Path dir) {
    String bootstrap = state.bootstrap();
    return switch (role) {
      case BROKER -> List.of("--node-id", Integer.toString(group.index()), "--cluster-id", state.kafkaClusterId(),
          "--listener", group.address() + ":" + group.port("client"),
          "--controller", group.address() + ":" + group.port("controller"),
          "--voters", state.groups(GroupKind.BROKER).stream()
              .map(b -> b.index() + "@" + b.address() + ":" + b.port("controller")).collect(Collectors.joining(",")),
          "--data-dir", dir.resolve("data").resolve(group.name()).toString());
      case PLANNER -> List.of("--bootstrap", bootstrap, "--model-repo", state.modelRepo(),
          "--state-dir", dir.resolve("data").resolve(group.name()).toString(),
          "--set", "planner.group.instance.id=" + group.name(), "--set", "host.id=" + group.name());
      case GATEWAY -> List.of("--bootstrap", bootstrap, "--http-port", Integer.toString(group.port("http")),
          "--grpc-port", Integer.toString(group.port("grpc")), "--set", "gateway.id=" + group.name());
      case WORKER -> List.of("--bootstrap", bootstrap, "--model-repo", state.modelRepo(), "--host-id", group.name(),
          "--set", "worker.group.instance.id=" + group.name() + "-worker");
      case PROFILER -> List.of("--bootstrap", bootstrap, "--model-repo", state.modelRepo(), "--host-id", group.name(),
          "--profile-at-start", "--profile-budget-ms", Long.toString(PROFILE_BUDGET_MS));
    };
  }
}

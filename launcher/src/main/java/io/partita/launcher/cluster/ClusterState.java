package io.partita.launcher.cluster;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Everything a cluster made, in {@code DIR/cluster.json}: written after each step of {@code up}
 * (so a cluster whose {@code up} died half-way is still known) and after each fault that changes
 * it, always whole (written beside, then renamed). Immutable: each change is a new state.
 *
 * @param id the short cluster id ({@link ClusterNames})
 * @param subnet the first three bytes of the cluster's /24 ({@code 198.18.42}); null on loopback
 * @param kafkaClusterId the Kafka cluster id every broker was formatted with
 * @param argFile the java argument file with the class path every process starts with
 * @param env the environment every process gets (the shared settings file, adjusted)
 */
public record ClusterState(String id, String dir, NetworkMode network, String subnet, String kafkaClusterId,
    String modelRepo, String javaBin, String argFile, List<String> javaOptions, List<Integer> infraCpus,
    List<Integer> workerCpus, Map<String, String> env, List<GroupRecord> groups, List<ProcessRecord> processes) {

  public static final String FILE = "cluster.json";

  private static final ObjectMapper JSON = new ObjectMapper()
      .enable(SerializationFeature.INDENT_OUTPUT)
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  public ClusterState {
    javaOptions = List.copyOf(javaOptions);
    infraCpus = List.copyOf(infraCpus);
    workerCpus = List.copyOf(workerCpus);
    env = Map.copyOf(env);
    groups = List.copyOf(groups);
    processes = List.copyOf(processes);
  }

  public ClusterNames names() {
    return new ClusterNames(id);
  }

  public Optional<GroupRecord> group(String name) {
    return groups.stream().filter(g -> g.name().equals(name)).findFirst();
  }

  public List<GroupRecord> groups(GroupKind kind) {
    return groups.stream().filter(g -> g.kind() == kind).toList();
  }

  public List<ProcessRecord> processesOf(String group) {
    return processes.stream().filter(p -> p.group().equals(group)).toList();
  }

  /** The brokers' client listeners, {@code host:port,...}. */
  public String bootstrap() {
    return groups(GroupKind.BROKER).stream().map(g -> g.address() + ":" + g.port("client")).collect(Collectors.joining(","));
  }

  /** This state with {@code group} added, or replacing the group of the same name. */
  public ClusterState with(GroupRecord group) {
    List<GroupRecord> out = new ArrayList<>(groups.stream().filter(g -> !g.name().equals(group.name())).toList());
    out.add(group);
    return new ClusterState(id, dir, network, subnet, kafkaClusterId, modelRepo, javaBin, argFile, javaOptions, infraCpus,
        workerCpus, env, out, processes);
  }

  /** This state with {@code process} added, or replacing the process of the same name in place. */
  public ClusterState with(ProcessRecord process) {
    List<ProcessRecord> out = new ArrayList<>(processes);
    int at = -1;
    for (int i = 0; i < out.size(); i++) {
      if (out.get(i).name().equals(process.name())) {
        at = i;
      }
    }
    if (at < 0) {
      out.add(process);
    } else {
      out.set(at, process);
    }
    return new ClusterState(id, dir, network, subnet, kafkaClusterId, modelRepo, javaBin, argFile, javaOptions, infraCpus,
        workerCpus, env, groups, out);
  }

  public String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write the cluster state: " + e.getMessage(), e);
    }
  }

  public static ClusterState fromJson(String json) {
    try {
      return JSON.readValue(json, ClusterState.class);
    } catch (IOException e) {
      throw new IllegalArgumentException("the cluster state cannot be read: " + e.getMessage(), e);
    }
  }

  /** Writes {@code DIR/cluster.json} whole: beside it first, then renamed over it. */
  public void write(Path dir) throws IOException {
    Path file = dir.resolve(FILE);
    Path tmp = dir.resolve(FILE + ".tmp");
    Files.writeString(tmp, toJson());
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** The state in {@code DIR}, if there is one. */
  public static Optional<ClusterState> read(Path dir) throws IOException {
    Path file = dir.resolve(FILE);
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      return Optional.of(fromJson(Files.readString(file)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }
}

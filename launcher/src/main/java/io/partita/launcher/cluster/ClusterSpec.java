package io.partita.launcher.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What {@code partita cluster up} is asked for, checked: each refusal names the flag and the fix.
 *
 * @param dir where the cluster keeps its state, data and logs
 * @param brokers KRaft nodes, each broker and controller
 * @param workerCpus one CPU quota (cores) per worker host, {@code host-1} first
 * @param gateways gateways, each with its HTTP and gRPC port
 * @param modelRepo the model repository; null = the demo repository, written under {@code dir}
 * @param network how processes reach each other
 * @param timeout how long {@code up} waits for every model to answer
 * @param envFile the shared settings file; null = the copy of compose/partita.env the launcher carries
 * @param javaOptions extra JVM options for every process (e.g. {@code -Xlog:gc})
 * @param classPath the class path every process starts with (this JVM's own)
 */
public record ClusterSpec(Path dir, int brokers, List<Double> workerCpus, int gateways, Path modelRepo,
    NetworkMode network, Duration timeout, Path envFile, List<String> javaOptions, String classPath) {

  public static final int PLANNERS = 2;
  public static final List<Double> DEFAULT_CPUS = List.of(0.6, 0.2);
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

  public ClusterSpec {
    workerCpus = List.copyOf(workerCpus);
    javaOptions = List.copyOf(javaOptions);
  }

  /**
   * The spec for these flags (null = not given), or an {@link IllegalArgumentException} naming the
   * flag. Without {@code --worker-cpus}: 0.6,0.2 for two hosts, else 0.8 of a core shared evenly.
   */
  public static ClusterSpec of(Path dir, Integer brokers, Integer workers, String workerCpus, Integer gateways,
      Path modelRepo, NetworkMode network, Duration timeout, Path envFile, List<String> javaOptions, String classPath) {
    if (dir == null) {
      throw new IllegalArgumentException("--dir is required");
    }
    int b = brokers == null ? 3 : brokers;
    if (b < 1 || b > GroupKind.BROKER.max()) {
      throw new IllegalArgumentException("--brokers " + b + ": give 1 to " + GroupKind.BROKER.max());
    }
    int g = gateways == null ? 2 : gateways;
    if (g < 1 || g > GroupKind.GATEWAY.max()) {
      throw new IllegalArgumentException("--gateways " + g + ": give 1 to " + GroupKind.GATEWAY.max());
    }
    List<Double> cpus;
    if (workerCpus != null) {
      cpus = Quota.parseList("--worker-cpus", workerCpus);
      if (workers != null && workers != cpus.size()) {
        throw new IllegalArgumentException("--worker-cpus gives " + cpus.size() + " quota" + (cpus.size() == 1 ? "" : "s")
            + " but --workers is " + workers + ": give one quota per worker host");
      }
    } else {
      int w = workers == null ? DEFAULT_CPUS.size() : workers;
      if (w < 1) {
        throw new IllegalArgumentException("--workers " + w + ": give at least 1");
      }
      cpus = w == DEFAULT_CPUS.size() ? DEFAULT_CPUS
          : Collections.nCopies(w, Math.max(Quota.MIN, Math.floor(80.0 / w) / 100));
    }
    if (cpus.size() > GroupKind.HOST.max()) {
      throw new IllegalArgumentException("--workers " + cpus.size() + ": give 1 to " + GroupKind.HOST.max());
    }
    if (modelRepo != null && !Files.isDirectory(modelRepo)) {
      throw new IllegalArgumentException("--model-repo " + modelRepo + ": not a directory");
    }
    if (envFile != null && !Files.isRegularFile(envFile)) {
      throw new IllegalArgumentException("--env-file " + envFile + ": no such file");
    }
    Duration t = timeout == null ? DEFAULT_TIMEOUT : timeout;
    if (t.isNegative() || t.isZero()) {
      throw new IllegalArgumentException("--timeout " + t.toSeconds() + ": give a positive number of seconds");
    }
    return new ClusterSpec(dir.toAbsolutePath().normalize(), b, cpus, g, modelRepo == null ? null : modelRepo.toAbsolutePath().normalize(),
        network == null ? NetworkMode.AUTO : network, t, envFile, javaOptions == null ? List.of() : javaOptions, classPath);
  }

  /** The worker hosts' names in order, {@code host-1} first. */
  public List<String> hostNames() {
    List<String> out = new ArrayList<>();
    for (int i = 1; i <= workerCpus.size(); i++) {
      out.add(GroupKind.HOST.groupName(i));
    }
    return out;
  }
}

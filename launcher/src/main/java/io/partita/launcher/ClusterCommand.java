package io.partita.launcher;

import io.partita.launcher.cluster.Cluster;
import io.partita.launcher.cluster.ClusterSpec;
import io.partita.launcher.cluster.NetworkMode;
import io.partita.launcher.cluster.Quota;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code partita cluster up|status|down|fault}: a real Partita cluster of separate processes on
 * this machine (brokers, planners, gateways, worker hosts of different CPU speeds, each in its own
 * network namespace and cgroups when root), and faults injected into it. The work is done by
 * {@link Cluster}; this class reads flags, prints, and turns refusals into usage errors (exit 2).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
    description = {"Run a real multi-process Partita cluster on this machine and inject faults into it.",
        "See docs/deployment.md, \"Many hosts on one machine\"."},
    subcommands = {ClusterCommand.Up.class, ClusterCommand.Status.class, ClusterCommand.Down.class, ClusterCommand.FaultCommand.class})
final class ClusterCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    throw new CommandLine.ParameterException(spec.commandLine(),
        "a subcommand is required: partita cluster up|status|down|fault --dir DIR (see partita cluster --help)");
  }

  /** {@code auto}, {@code netns}, {@code loopback}, in any case. */
  static final class NetworkConverter implements CommandLine.ITypeConverter<NetworkMode> {
    @Override
    public NetworkMode convert(String value) {
      return parse(NetworkMode.class, NetworkMode.values(), value);
    }
  }

  /** {@code kill}, {@code stop}, ... in any case. */
  static final class FaultConverter implements CommandLine.ITypeConverter<Cluster.Fault> {
    @Override
    public Cluster.Fault convert(String value) {
      return parse(Cluster.Fault.class, Cluster.Fault.values(), value);
    }
  }

  private static <E extends Enum<E>> E parse(Class<E> type, E[] values, String value) {
    for (E e : values) {
      if (e.name().equalsIgnoreCase(value.strip())) {
        return e;
      }
    }
    throw new CommandLine.TypeConversionException("expected one of " + Arrays.stream(values).map(Object::toString)
        .collect(Collectors.joining(", ")) + ", got '" + value + "'");
  }

  /** What every subcommand takes. */
  static class Dir {
    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "The cluster's directory: state (cluster.json), data and logs.")
    Path dir;
  }

  /** Runs {@code body}; a refusal of the input ({@link IllegalArgumentException}) is a usage error naming it. */
  static int refusing(CommandSpec spec, Callable<Integer> body) throws Exception {
    try {
      return body.call();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  @Command(name = "up", mixinStandardHelpOptions = true,
      description = {"Start brokers, two planners, gateways and worker hosts (worker + profiler each) as separate processes,"
          + " wait until every model answers 200 through every gateway, then print key=value lines:"
          + " gateway=, grpc= (per gateway), bootstrap=, host= ... cpus= ... addr= (per worker host).",
          "As root on Linux each group gets its own network namespace (198.18.0.0/15) and cgroups (cpuset, CPU quota, freezer);"
              + " otherwise loopback and taskset, without quotas."})
  static final class Up implements Callable<Integer> {
    @Spec CommandSpec spec;
    @CommandLine.Mixin Dir dir = new Dir();

    @Option(names = "--brokers", paramLabel = "N", description = "KRaft nodes, each broker and controller (default: 3).")
    Integer brokers;

    @Option(names = "--workers", paramLabel = "N", description = "Worker hosts host-1..host-N (default: 2, or one per --worker-cpus quota).")
    Integer workers;

    @Option(names = "--worker-cpus", paramLabel = "Q,Q,...", description = "CPU quota of each worker host in cores"
        + " (default: 0.6,0.2: host-1 gets 60% of a core, host-2 20%).")
    String workerCpus;

    @Option(names = "--gateways", paramLabel = "N", description = "Gateways (default: 2).")
    Integer gateways;

    @Option(names = "--model-repo", paramLabel = "DIR", description = "The model repository (default: the demo repository, written under --dir).")
    Path modelRepo;

    @Option(names = "--network", paramLabel = "MODE", converter = NetworkConverter.class, description = "auto (default: netns when root on Linux), netns or loopback.")
    NetworkMode network;

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "How long to wait for every model to answer (default: 300).")
    Long timeoutSeconds;

    @Option(names = "--env-file", paramLabel = "FILE", description = "The shared settings file (default: compose/partita.env, carried in the launcher).")
    Path envFile;

    @Option(names = "--java-opt", paramLabel = "OPTION", description = "An extra JVM option for every process (repeatable), e.g. --java-opt -Xlog:gc.")
    List<String> javaOptions = List.of();

    @Override
    public Integer call() throws Exception {
      if (timeoutSeconds != null && timeoutSeconds <= 0) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--timeout " + timeoutSeconds + ": give a positive number of seconds");
      }
      ClusterSpec clusterSpec;
      try {
        clusterSpec = ClusterSpec.of(dir.dir, brokers, workers, workerCpus, gateways, modelRepo, network,
            timeoutSeconds == null ? null : Duration.ofSeconds(timeoutSeconds), envFile, javaOptions,
            System.getProperty("java.class.path"));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
      PrintWriter out = spec.commandLine().getOut();
      Cluster.UpResult result;
      try {
        result = Cluster.up(clusterSpec, System.err);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      } catch (IllegalStateException e) {
        spec.commandLine().getErr().println("partita cluster up: " + e.getMessage());
        return 1;
      }
      result.lines().forEach(out::println);
      out.flush();
      return 0;
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true,
      description = "One line per process: NAME role= host= pid= state= (running, exited, paused, cut, slow Q).")
  static final class Status implements Callable<Integer> {
    @Spec CommandSpec spec;
    @CommandLine.Mixin Dir dir = new Dir();

    @Override
    public Integer call() throws Exception {
      List<Cluster.Status> lines;
      try {
        lines = Cluster.status(dir.dir);
      } catch (IllegalStateException | IllegalArgumentException e) {
        spec.commandLine().getErr().println("partita cluster status: " + e.getMessage());
        return 1;
      }
      PrintWriter out = spec.commandLine().getOut();
      lines.forEach(out::println);
      out.flush();
      return 0;
    }
  }

  @Command(name = "down", mixinStandardHelpOptions = true,
      description = "Stop every process of the cluster and remove its namespaces, links, bridge and cgroups"
          + " (also when its state file is partial or lost). Idempotent.")
  static final class Down implements Callable<Integer> {
    @Spec CommandSpec spec;
    @CommandLine.Mixin Dir dir = new Dir();

    @Override
    public Integer call() {
      PrintStream err = System.err;
      Cluster.Leftovers left = Cluster.down(dir.dir, err);
      if (!left.empty()) {
        spec.commandLine().getErr().println("partita cluster down: could not remove " + left);
        return 1;
      }
      err.println("Cluster in " + dir.dir + " is down");
      return 0;
    }
  }

  @Command(name = "fault", mixinStandardHelpOptions = true,
      description = {"Inject a fault into one target: a worker host (host-N: its worker and profiler), broker-N, planner-N or gateway-N.",
          "kill: SIGKILL. stop: SIGTERM and wait for exit. pause/resume: cgroup freezer (SIGSTOP/SIGCONT on loopback).",
          "partition/heal: take the target's link down/up. slow --cpus Q / restore: change/restore its CPU quota.",
          "start: start it again; start host-N --cpus Q adds a new worker host."})
  static final class FaultCommand implements Callable<Integer> {
    @Spec CommandSpec spec;
    @CommandLine.Mixin Dir dir = new Dir();

    @Parameters(index = "0", paramLabel = "VERB", converter = FaultConverter.class, description = "kill, stop, pause, resume, partition, heal, slow, restore or start.")
    Cluster.Fault verb;

    @Parameters(index = "1", paramLabel = "TARGET", description = "host-N, broker-N, planner-N or gateway-N.")
    String target;

    @Option(names = "--cpus", paramLabel = "Q", description = "CPU quota in cores: for slow, or for start of a new worker host.")
    String cpus;

    @Override
    public Integer call() throws Exception {
      return refusing(spec, () -> {
        Double quota = cpus == null ? null : Quota.parse("--cpus", cpus);
        try {
          String line = Cluster.fault(dir.dir, verb, target, quota);
          spec.commandLine().getOut().println(line);
          spec.commandLine().getOut().flush();
          return 0;
        } catch (IllegalStateException e) {
          spec.commandLine().getErr().println("partita cluster fault: " + e.getMessage());
          return 1;
        }
      });
    }
  }
}

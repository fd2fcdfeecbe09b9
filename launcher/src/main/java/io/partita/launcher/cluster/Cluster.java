package io.partita.launcher.cluster;

import io.partita.launcher.cluster.CpuLayout.Placement;
import io.partita.models.demo.DemoRepository;
import io.partita.models.demo.DemoSet;
import io.partita.models.repo.ModelRepository;
import io.partita.models.repo.RepositoryIndex;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;

/**
 * A Partita cluster of separate processes on this machine: what {@code partita cluster up},
 * {@code status}, {@code fault} and {@code down} do, callable from a test as from the command.
 * Everything it makes is named by the cluster's id ({@link ClusterNames}) and recorded in the
 * state file ({@link ClusterState}) as it is made, so every verb works from a new JVM and
 * {@link #down} removes everything even when {@code up} died half-way or the state file is gone.
 */
public final class Cluster {
  private static final Duration GRACE = Duration.ofSeconds(10);

  private Cluster() {}

  /** What {@code up} printed on standard output, and how long it took. */
  public record UpResult(ClusterState state, List<String> lines, Duration firstAnswer, Duration ready) {}

  /**
   * Starts the cluster and returns once every model answers 200 through every gateway; on any
   * failure or at the timeout it removes everything it made and throws, saying why. Progress goes
   * to {@code err}.
   */
  public static UpResult up(ClusterSpec spec, PrintStream err) throws Exception {
    long started = System.nanoTime();
    Path dir = spec.dir();
    ClusterNames names = ClusterNames.of(dir);
    Files.createDirectories(dir);
    Optional<ClusterState> previous = readQuietly(dir);
    if (previous.isPresent()) {
      long running = previous.get().processes().stream().filter(p -> Procs.alive(p.pid(), names.mark())).count();
      if (running > 0) {
        throw new IllegalStateException("a cluster is already up in " + dir + " (" + running
            + " processes running); run `partita cluster down --dir " + dir + "` first");
      }
    }
    if (!leftovers(names).empty()) {
      err.println("Removing what an earlier cluster in " + dir + " left behind");
      down(dir, err);
    }
    NetworkMode mode = resolve(spec.network(), err);
    List<String> notes = new ArrayList<>();
    Map<String, String> shared = spec.envFile() != null ? EnvFile.read(spec.envFile()) : EnvFile.shared();
    Map<String, String> env = ClusterPlan.environment(shared, spec.brokers(), notes);
    CpuLayout layout = CpuLayout.of(onlineCpus());
    Map<String, Double> quotas = new LinkedHashMap<>();
    for (int i = 0; i < spec.workerCpus().size(); i++) {
      quotas.put(spec.hostNames().get(i), spec.workerCpus().get(i));
    }
    Map<String, List<Integer>> cpusets;
    if (mode == NetworkMode.NETNS) {
      if (!layout.separate()) {
        throw new IllegalArgumentException("worker hosts need CPUs of their own, apart from the brokers, planners and gateways,"
            + " but this process may use only " + CpuLayout.cpuList(layout.infra()) + "; run on 2 or more CPUs, or use --network loopback");
      }
      try {
        cpusets = layout.place(Map.of(), quotas);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--worker-cpus: " + e.getMessage(), e);
      }
    } else {
      cpusets = new LinkedHashMap<>();
      quotas.keySet().forEach(h -> cpusets.put(h, layout.workers()));
      notes.add("on loopback there are no CPU quotas: every worker host runs on " + CpuLayout.cpuList(layout.workers())
          + " at full speed, so hosts do not differ in speed (--worker-cpus is not applied), and partition and slow are unavailable");
    }
    notes.forEach(n -> err.println("Note: " + n));

    Path repo = spec.modelRepo();
    if (repo == null) {
      repo = dir.resolve("models");
      DemoRepository.writeTo(repo, DemoSet.CLUSTER);
    }
    RepositoryIndex index = ModelRepository.scan(repo);
    if (index.serviceModels().isEmpty()) {
      throw new IllegalArgumentException("--model-repo " + repo + " has no models to serve");
    }
    deleteTree(dir.resolve("data"));
    deleteTree(dir.resolve("logs"));
    Path argFile = dir.resolve("run").resolve("classpath.args");
    Files.createDirectories(argFile.getParent());
    Files.writeString(argFile, argFileText(spec.classPath()));

    String subnet = mode == NetworkMode.NETNS ? freeSubnet(names) : null;
    List<GroupRecord> groups = new ArrayList<>();
    IntSupplier freePort = Cluster::freePort;
    for (int i = 1; i <= spec.brokers(); i++) {
      groups.add(ClusterPlan.group(names, mode, subnet, GroupKind.BROKER, i, layout.infra(), 0, freePort));
    }
    for (int i = 1; i <= ClusterSpec.PLANNERS; i++) {
      groups.add(ClusterPlan.group(names, mode, subnet, GroupKind.PLANNER, i, layout.infra(), 0, freePort));
    }
    for (int i = 1; i <= spec.gateways(); i++) {
      groups.add(ClusterPlan.group(names, mode, subnet, GroupKind.GATEWAY, i, layout.infra(), 0, freePort));
    }
    for (int i = 1; i <= spec.workerCpus().size(); i++) {
      String host = GroupKind.HOST.groupName(i);
      groups.add(ClusterPlan.group(names, mode, subnet, GroupKind.HOST, i, cpusets.get(host),
          mode == NetworkMode.NETNS ? quotas.get(host) : 0, freePort));
    }
    ClusterState state = new ClusterState(names.id(), dir.toString(), mode, subnet, Uuid.randomUuid().toString(),
        repo.toString(), Path.of(System.getProperty("java.home"), "bin", "java").toString(), argFile.toString(),
        spec.javaOptions(), layout.infra(), layout.workers(), env, groups, List.of());
    for (GroupRecord g : groups) {
      for (ProcessRecord p : ClusterPlan.processes(state, g)) {
        state = state.with(p);
      }
    }
    state.write(dir);

    Thread cleanUp = new Thread(() -> {
      err.println("partita cluster up: interrupted; removing what was started");
      down(dir, err);
    }, "partita-cluster-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanUp);
    try {
      if (mode == NetworkMode.NETNS) {
        err.println("Network: bridge " + names.bridge() + " at " + subnet + ".1/24; CPUs: brokers, planners and gateways on "
            + CpuLayout.cpuList(layout.infra()) + ", worker hosts on " + CpuLayout.cpuList(layout.workers()));
        NetNs.bridge(names.bridge(), subnet + ".1");
        for (GroupRecord g : groups) {
          NetNs.namespace(g.namespace(), names.bridge(), g.hostVeth(), names.peerVeth(g.slot()), g.address());
          Cgroups.create(g.cgroup(), g.cpus(), g.quota());
        }
      }
      Waiter waiter = new Waiter(state, Cluster::restart, err, started, System.nanoTime() + spec.timeout().toNanos());
      waiter.state = startGroups(waiter.state, GroupKind.BROKER);
      waiter.awaitBrokers();
      waiter.state = startGroups(waiter.state, GroupKind.PLANNER);
      waiter.state = startGroups(waiter.state, GroupKind.GATEWAY);
      waiter.state = startGroups(waiter.state, GroupKind.HOST);
      waiter.awaitModels(index);
      state = waiter.state;
      Duration ready = Duration.ofNanos(System.nanoTime() - started);
      err.printf(Locale.ROOT, "Cluster %s is up: first 200 after %.1f s, every model answering through every gateway after %.1f s%n",
          names.id(), waiter.firstAnswer.toMillis() / 1000.0, ready.toMillis() / 1000.0);
      removeHook(cleanUp);
      return new UpResult(state, lines(state), waiter.firstAnswer, ready);
    } catch (Exception | Error e) {
      if (!removeHook(cleanUp)) {
        throw e; // the JVM is shutting down (Ctrl-C): the hook removes the cluster
      }
      err.println("partita cluster up failed: " + e.getMessage());
      err.println("Removing everything it made (logs stay in " + dir.resolve("logs") + ")");
      down(dir, err);
      throw e;
    }
  }

  /** Removes the clean-up hook; false when the JVM is already shutting down and the hook runs. */
  private static boolean removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
      return true;
    } catch (IllegalStateException e) {
      return false;
    }
  }

  /** The cgroup a load generator runs in beside a cluster: the brokers', planners' and gateways' CPUs. */
  static final String LOAD = "load";

  /**
   * Confines a load generator (this JVM, say) to the CPUs of the brokers, planners and gateways, so
   * it takes nothing from the worker hosts, whose CPU quotas are what is measured. Only with
   * namespaces and cgroups (as root); returns false, changing nothing, otherwise. {@link #release}
   * undoes it, and must before {@link #down}, which cannot remove a group a process is still in.
   */
  public static boolean confineLoadGenerator(Path dir, long pid) throws IOException {
    ClusterState state = ClusterState.read(dir.toAbsolutePath().normalize()).orElseThrow();
    if (state.network() != NetworkMode.NETNS) {
      return false;
    }
    String path = state.names().cgroup(LOAD);
    Cgroups.create(path, CpuLayout.of(onlineCpus()).infra(), 0);
    Cgroups.join(path, pid);
    return true;
  }

  /** Moves a confined load generator back where every process starts (see {@link #confineLoadGenerator}). */
  public static void release(long pid) throws IOException {
    if (Cgroups.available()) {
      Cgroups.leave(pid);
    }
  }

  /** The {@code key=value} lines {@code up} prints. */
  public static List<String> lines(ClusterState state) {
    List<String> out = new ArrayList<>();
    for (GroupRecord g : state.groups(GroupKind.GATEWAY)) {
      out.add("gateway=http://" + g.address() + ":" + g.port("http"));
      out.add("grpc=" + g.address() + ":" + g.port("grpc"));
    }
    out.add("bootstrap=" + state.bootstrap());
    for (GroupRecord g : state.groups(GroupKind.HOST)) {
      out.add("host=" + g.name() + " cpus=" + (g.quota() > 0 ? Quota.format(g.quota()) : "none") + " addr=" + g.address());
    }
    return out;
  }

  private static ClusterState startGroups(ClusterState state, GroupKind kind) throws IOException {
    for (GroupRecord g : state.groups(kind)) {
      state = startGroup(state, g);
    }
    return state;
  }

  /** Starts one process again (its log goes on); the state is written with its new pid. */
  private static ClusterState restart(ClusterState state, ProcessRecord process) throws IOException {
    long pid = Procs.start(process, state.group(process.group()).orElseThrow(), state.env());
    ClusterState next = state.with(process.withPid(pid));
    next.write(Path.of(next.dir()));
    return next;
  }

  /** Starts the processes of {@code group} that are not running; the state is written after each. */
  private static ClusterState startGroup(ClusterState state, GroupRecord group) throws IOException {
    for (ProcessRecord p : state.processesOf(group.name())) {
      if (!Procs.alive(p.pid(), state.names().mark())) {
        long pid = Procs.start(p, group, state.env());
        state = state.with(p.withPid(pid));
        state.write(Path.of(state.dir()));
      }
    }
    return state;
  }

  // ---------------------------------------------------------------------------------------------
  // status

  /** One process's line: name, role, host id, pid, state. */
  public record Status(String name, Role role, String hostId, long pid, String state) {
    @Override
    public String toString() {
      return name + " role=" + role + " host=" + (hostId == null ? "-" : hostId) + " pid=" + pid + " state=" + state;
    }
  }

  public static List<Status> status(Path dir) throws IOException {
    ClusterState state = ClusterState.read(dir.toAbsolutePath().normalize())
        .orElseThrow(() -> new IllegalStateException("no cluster in " + dir + " (no " + ClusterState.FILE + ")"));
    List<Status> out = new ArrayList<>();
    for (ProcessRecord p : state.processes()) {
      out.add(new Status(p.name(), p.role(), p.hostId(), p.pid(), stateOf(state, p)));
    }
    return out;
  }

  /** {@code running}, {@code exited}, or what is done to it: {@code paused}, {@code cut}, {@code slow Q}. */
  static String stateOf(ClusterState state, ProcessRecord p) {
    if (!Procs.alive(p.pid(), state.names().mark())) {
      return p.pid() == 0 ? "not started" : "exited";
    }
    GroupRecord g = state.group(p.group()).orElseThrow();
    List<String> faults = new ArrayList<>();
    if (g.cgroup() != null ? Cgroups.frozen(g.cgroup()) : Procs.state(p.pid()) == 'T') {
      faults.add("paused");
    }
    if (g.hostVeth() != null && !NetNs.linkUp(g.hostVeth())) {
      faults.add("cut");
    }
    if (g.cgroup() != null) {
      try {
        double quota = Cgroups.quota(g.cgroup());
        if (Math.abs(quota - g.quota()) > 1e-6) {
          faults.add("slow " + (quota > 0 ? Quota.format(quota) : "none"));
        }
      } catch (IOException | RuntimeException e) {
        faults.add("no cgroup");
      }
    }
    return faults.isEmpty() ? "running" : String.join(", ", faults);
  }

  // ---------------------------------------------------------------------------------------------
  // fault

  /** What {@code fault} does to a target. */
  public enum Fault {
    KILL, STOP, PAUSE, RESUME, PARTITION, HEAL, SLOW, RESTORE, START;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * Does {@code fault} to {@code target} (a group: {@code host-N}, {@code broker-N}, {@code planner-N},
   * {@code gateway-N}); returns the line that says what was done.
   *
   * @param cpus the quota for {@code slow}, or for {@code start} of a new worker host; else null
   */
  public static String fault(Path dirGiven, Fault fault, String target, Double cpus) throws Exception {
    Path dir = dirGiven.toAbsolutePath().normalize();
    ClusterState state = ClusterState.read(dir)
        .orElseThrow(() -> new IllegalStateException("no cluster in " + dir + " (no " + ClusterState.FILE + ")"));
    GroupKind.Target parsed = GroupKind.parse(target);
    Optional<GroupRecord> found = state.group(parsed.name());
    if (found.isEmpty() && !(fault == Fault.START && parsed.kind() == GroupKind.HOST)) {
      throw new IllegalArgumentException(target + " is not part of this cluster (it has "
          + state.groups().stream().map(GroupRecord::name).collect(Collectors.joining(", ")) + ")"
          + (fault == Fault.START ? "; only worker hosts can be added" : ""));
    }
    if (cpus != null && fault != Fault.SLOW && !(fault == Fault.START && found.isEmpty())) {
      throw new IllegalArgumentException("--cpus goes with slow, or with start of a new worker host");
    }
    String mark = state.names().mark();
    boolean netns = state.network() == NetworkMode.NETNS;
    if (!netns && (fault == Fault.PARTITION || fault == Fault.HEAL || fault == Fault.SLOW || fault == Fault.RESTORE)) {
      throw new IllegalArgumentException(fault + " needs network namespaces and cgroups, and this cluster runs on loopback"
          + " (start it as root with --network netns)");
    }
    if (found.isEmpty()) {
      return addHost(state, parsed, cpus);
    }
    GroupRecord g = found.get();
    List<ProcessRecord> procs = state.processesOf(g.name());
    List<ProcessRecord> alive = procs.stream().filter(p -> Procs.alive(p.pid(), mark)).toList();
    String pids = procs.stream().map(p -> p.name() + " pid " + p.pid()).collect(Collectors.joining(", "));
    switch (fault) {
      case KILL -> {
        alive.forEach(p -> Procs.signal(p.pid(), "KILL"));
        thaw(g, alive); // a frozen process dies only once thawed
        for (ProcessRecord p : alive) {
          Procs.awaitExit(p.pid(), mark, GRACE);
        }
        return g.name() + ": killed (SIGKILL) " + pids;
      }
      case STOP -> {
        thaw(g, alive);
        alive.forEach(p -> Procs.signal(p.pid(), "TERM"));
        List<String> still = new ArrayList<>();
        for (ProcessRecord p : alive) {
          if (!Procs.awaitExit(p.pid(), mark, Duration.ofSeconds(60))) {
            still.add(p.name());
          }
        }
        if (!still.isEmpty()) {
          throw new IllegalStateException(g.name() + ": " + String.join(", ", still) + " still running 60 s after SIGTERM; use kill");
        }
        return g.name() + ": stopped (SIGTERM, exited) " + pids;
      }
      case PAUSE -> {
        if (netns) {
          Cgroups.freeze(g.cgroup(), true);
        } else {
          alive.forEach(p -> Procs.signal(p.pid(), "STOP"));
        }
        return g.name() + ": paused (" + (netns ? "cgroup freezer FROZEN" : "SIGSTOP") + ") " + pids;
      }
      case RESUME -> {
        thaw(g, alive);
        return g.name() + ": resumed (" + (netns ? "cgroup freezer THAWED" : "SIGCONT") + ") " + pids;
      }
      case PARTITION -> {
        NetNs.setLink(g.hostVeth(), false);
        return g.name() + ": cut off (" + g.hostVeth() + " down; " + g.address() + " unreachable)";
      }
      case HEAL -> {
        NetNs.setLink(g.hostVeth(), true);
        return g.name() + ": reconnected (" + g.hostVeth() + " up)";
      }
      case SLOW -> {
        if (cpus == null) {
          throw new IllegalArgumentException("slow needs --cpus Q, the quota in cores (e.g. --cpus 0.1)");
        }
        checkSlowFits(state, g, cpus);
        Cgroups.setQuota(g.cgroup(), cpus);
        return g.name() + ": CPU quota " + Quota.format(cpus) + " of a core (was " + (g.quota() > 0 ? Quota.format(g.quota()) : "none") + ")";
      }
      case RESTORE -> {
        Cgroups.setQuota(g.cgroup(), g.quota());
        return g.name() + ": CPU quota restored to " + (g.quota() > 0 ? Quota.format(g.quota()) : "none");
      }
      case START -> {
        if (alive.size() == procs.size()) {
          return g.name() + ": already running (" + pids + ")";
        }
        if (netns && !Cgroups.exists(g.cgroup())) {
          throw new IllegalStateException(g.name() + "'s cgroup " + g.cgroup() + " is gone; run down and up again");
        }
        state = startGroup(state, g);
        return g.name() + ": started " + state.processesOf(g.name()).stream().map(p -> p.name() + " pid " + p.pid())
            .collect(Collectors.joining(", "));
      }
      default -> throw new IllegalStateException("unknown fault " + fault);
    }
  }

  private static void thaw(GroupRecord g, List<ProcessRecord> alive) throws IOException, InterruptedException {
    if (g.cgroup() != null) {
      Cgroups.freeze(g.cgroup(), false);
    } else {
      alive.forEach(p -> Procs.signal(p.pid(), "CONT"));
    }
  }

  /** A host's new quota must still fit on its CPUs beside the other hosts; the infrastructure's on its own CPUs. */
  private static void checkSlowFits(ClusterState state, GroupRecord g, double cpus) {
    if (g.kind().infrastructure()) {
      if (cpus > g.cpus().size()) {
        throw new IllegalArgumentException("--cpus " + Quota.format(cpus) + ": " + g.name() + " runs on "
            + CpuLayout.cpuList(g.cpus()) + ", so at most " + g.cpus().size());
      }
      return;
    }
    Map<String, Placement> others = new LinkedHashMap<>();
    for (GroupRecord h : state.groups(GroupKind.HOST)) {
      if (!h.name().equals(g.name())) {
        others.put(h.name(), new Placement(h.cpus(), currentQuota(h)));
      }
    }
    CpuLayout onItsCpus = new CpuLayout(state.infraCpus(), g.cpus());
    try {
      onItsCpus.place(others, Map.of(g.name(), cpus));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--cpus: " + e.getMessage(), e);
    }
  }

  private static double currentQuota(GroupRecord h) {
    try {
      return Cgroups.quota(h.cgroup());
    } catch (IOException | RuntimeException e) {
      return h.quota();
    }
  }

  /** {@code start host-N --cpus Q} of a host the cluster does not have: a new worker host joins. */
  private static String addHost(ClusterState state, GroupKind.Target target, Double cpus) throws IOException {
    boolean netns = state.network() == NetworkMode.NETNS;
    if (cpus == null && netns) {
      throw new IllegalArgumentException("start " + target.name() + " adds a new worker host: give its quota with --cpus Q");
    }
    CpuLayout layout = new CpuLayout(state.infraCpus(), state.workerCpus());
    List<Integer> cpuset = state.workerCpus();
    if (netns) {
      Map<String, Placement> placed = new LinkedHashMap<>();
      state.groups(GroupKind.HOST).forEach(h -> placed.put(h.name(), new Placement(h.cpus(), currentQuota(h))));
      try {
        cpuset = layout.place(placed, Map.of(target.name(), cpus)).get(target.name());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--cpus: " + e.getMessage(), e);
      }
    }
    ClusterNames names = state.names();
    GroupRecord g = ClusterPlan.group(names, state.network(), state.subnet(), GroupKind.HOST, target.index(), cpuset,
        netns ? cpus : 0, Cluster::freePort);
    state = state.with(g);
    for (ProcessRecord p : ClusterPlan.processes(state, g)) {
      state = state.with(p);
    }
    state.write(Path.of(state.dir()));
    if (netns) {
      NetNs.namespace(g.namespace(), names.bridge(), g.hostVeth(), names.peerVeth(g.slot()), g.address());
      Cgroups.create(g.cgroup(), g.cpus(), g.quota());
    }
    state = startGroup(state, g);
    return g.name() + ": added, " + (netns ? Quota.format(g.quota()) + " of " + CpuLayout.cpuList(g.cpus()) : "no quota")
        + " at " + g.address() + "; started " + state.processesOf(g.name()).stream().map(p -> p.name() + " pid " + p.pid())
        .collect(Collectors.joining(", "));
  }

  // ---------------------------------------------------------------------------------------------
  // down

  /** What is left on this machine with a cluster's name on it. */
  public record Leftovers(List<String> namespaces, List<String> links, List<String> cgroups, List<Long> processes) {
    public boolean empty() {
      return namespaces.isEmpty() && links.isEmpty() && cgroups.isEmpty() && processes.isEmpty();
    }

    @Override
    public String toString() {
      return "namespaces " + namespaces + ", links " + links + ", cgroups " + cgroups + ", processes " + processes;
    }
  }

  public static Leftovers leftovers(ClusterNames names) {
    boolean ip = Shell.has("ip");
    List<String> namespaces = ip ? NetNs.namespaces().stream().filter(n -> n.startsWith(names.id() + "-")).toList() : List.of();
    List<String> links = ip ? NetNs.links().stream().filter(n -> n.startsWith(names.id())).toList() : List.of();
    List<String> cgroups = new ArrayList<>(Cgroups.groups(names.id()));
    if (Cgroups.exists(names.id())) {
      cgroups.add(names.id());
    }
    return new Leftovers(namespaces, links, cgroups, Procs.marked(names.mark()));
  }

  /**
   * Stops every process of the cluster in {@code dir} and removes every namespace, link and cgroup
   * it made. Works from the state file when there is one and, in any case, sweeps by the cluster's
   * prefix: processes carrying its mark or in its cgroups. Idempotent. Returns what could not be
   * removed (empty when all is gone).
   */
  public static Leftovers down(Path dir, PrintStream err) {
    dir = dir.toAbsolutePath().normalize();
    ClusterNames names = ClusterNames.of(dir);
    String mark = names.mark();
    Optional<ClusterState> state = readQuietly(dir);
    Set<Long> pids = new LinkedHashSet<>();
    state.ifPresent(s -> s.processes().forEach(p -> {
      if (Procs.alive(p.pid(), mark)) {
        pids.add(p.pid());
      }
    }));
    pids.addAll(Procs.marked(mark));
    List<String> cgroups = Cgroups.groups(names.id());
    for (String cg : cgroups) {
      pids.addAll(Cgroups.pids(cg));
      try {
        Cgroups.freeze(cg, false); // a frozen process cannot die
      } catch (IOException | RuntimeException e) {
        // no freezer group for it
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    pids.forEach(pid -> Procs.signal(pid, "CONT"));
    // Partita's services first, while the brokers still answer, so they leave their groups; then the brokers.
    List<Long> brokers = pids.stream().filter(pid -> Procs.cmdline(pid).contains(ClusterPlan.MAIN_CLASS + " broker ")).toList();
    List<Long> services = pids.stream().filter(pid -> !brokers.contains(pid)).toList();
    stop(services, mark);
    stop(brokers, mark);
    for (String cg : cgroups) {
      Cgroups.pids(cg).forEach(pid -> Procs.signal(pid, "KILL")); // anything that slipped in unmarked
    }
    if (Shell.has("ip")) {
      for (String ns : NetNs.namespaces()) {
        if (ns.startsWith(names.id() + "-")) {
          report(err, NetNs.deleteNamespace(ns), "namespace " + ns);
        }
      }
      for (String link : NetNs.links()) {
        if (link.startsWith(names.id())) {
          report(err, NetNs.deleteLink(link), "link " + link);
        }
      }
    }
    long until = System.nanoTime() + GRACE.toNanos();
    for (String cg : cgroups) {
      while (!Cgroups.remove(cg) && System.nanoTime() < until) {
        sleep(50); // the last processes are still leaving it
      }
    }
    Cgroups.remove(names.id());
    try {
      Files.deleteIfExists(dir.resolve(ClusterState.FILE));
    } catch (IOException e) {
      err.println("Cannot remove " + dir.resolve(ClusterState.FILE) + ": " + e.getMessage());
    }
    Leftovers left = leftovers(names);
    if (!left.empty()) {
      err.println("Left behind in cluster " + names.id() + ": " + left);
    }
    return left;
  }

  private static void stop(List<Long> pids, String mark) {
    pids.forEach(pid -> Procs.signal(pid, "TERM"));
    long until = System.nanoTime() + GRACE.toNanos();
    for (long pid : pids) {
      try {
        Procs.awaitExit(pid, mark, Duration.ofNanos(Math.max(0, until - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (Procs.alive(pid, mark)) {
        Procs.signal(pid, "KILL");
      }
    }
    for (long pid : pids) {
      try {
        Procs.awaitExit(pid, mark, GRACE);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void report(PrintStream err, Shell.Result r, String what) {
    if (!r.ok() && !r.output().contains("No such file") && !r.output().contains("Cannot find device")) {
      err.println("Cannot remove " + what + ": " + r.output());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // helpers

  private static Optional<ClusterState> readQuietly(Path dir) {
    try {
      return ClusterState.read(dir);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  private static NetworkMode resolve(NetworkMode asked, PrintStream err) {
    boolean root = Shell.isRoot();
    boolean possible = root && System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")
        && NetNs.available() && Cgroups.available() && Shell.has("setsid");
    switch (asked) {
      case NETNS -> {
        if (!possible) {
          throw new IllegalArgumentException("--network netns needs root on Linux with `ip`, `setsid` and cgroup v1 (cpu, cpuset,"
              + " freezer) mounted under /sys/fs/cgroup" + (root ? "" : " (this is not root)") + "; use --network loopback");
        }
        return NetworkMode.NETNS;
      }
      case LOOPBACK -> {
        return NetworkMode.LOOPBACK;
      }
      default -> {
        if (!possible) {
          err.println("Note: not root on Linux with network namespaces and cgroup v1, so the cluster runs on loopback");
        }
        return possible ? NetworkMode.NETNS : NetworkMode.LOOPBACK;
      }
    }
  }

  /** The CPUs this process may run on ({@code Cpus_allowed_list} of /proc/self/status). */
  static List<Integer> onlineCpus() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("Cpus_allowed_list:")) {
          return CpuLayout.parseCpuset(line.substring(line.indexOf(':') + 1));
        }
      }
    } catch (IOException e) {
      // not Linux: count them
    }
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
      out.add(i);
    }
    return out;
  }

  /** The cluster's preferred /24, or the next one that no address here is in. */
  private static String freeSubnet(ClusterNames names) {
    Set<String> used = NetNs.usedSubnets();
    for (int i = 0; i < 512; i++) {
      String subnet = ClusterPlan.subnet(names.subnetIndex() + i);
      if (!used.contains(subnet)) {
        return subnet;
      }
    }
    throw new IllegalStateException("every /24 of 198.18.0.0/15 is in use on this machine");
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("no free port: " + e.getMessage(), e);
    }
  }

  /** The java argument file: the class path, absolute, quoted as the java launcher reads it. */
  static String argFileText(String classPath) {
    String absolute = Stream.of(classPath.split(File.pathSeparator)).filter(s -> !s.isBlank())
        .map(s -> Path.of(s).toAbsolutePath().normalize().toString()).collect(Collectors.joining(File.pathSeparator));
    return "-cp \"" + absolute.replace("\\", "\\\\") + "\"\n";
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

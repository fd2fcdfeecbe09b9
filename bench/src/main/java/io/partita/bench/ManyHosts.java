package io.partita.bench;

import io.partita.avro.HostEnvironment;
import io.partita.avro.PartitionPlan;
import io.partita.avro.ProfileStatus;
import io.partita.avro.SlotAssignment;
import io.partita.avro.Tensor;
import io.partita.avro.TimingEvent;
import io.partita.avro.VersionChoice;
import io.partita.bench.OpenLoad.Caller;
import io.partita.client.PartitaClient;
import io.partita.common.Topic;
import io.partita.common.Topics;
import io.partita.common.health.LoopGuard;
import io.partita.common.kafka.KafkaClients;
import io.partita.common.kafka.TopicFollower;
import io.partita.common.serde.Codecs;
import io.partita.launcher.cluster.Cluster;
import io.partita.launcher.cluster.ClusterSpec;
import io.partita.launcher.cluster.ClusterState;
import io.partita.launcher.cluster.GroupKind;
import io.partita.launcher.cluster.GroupRecord;
import io.partita.launcher.cluster.InferBodies;
import io.partita.launcher.cluster.NetworkMode;
import io.partita.models.demo.DemoHeavy;
import io.partita.models.demo.DemoMlp;
import io.partita.profiler.ProfilerService;
import io.partita.profiler.kafka.AvroMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.slf4j.LoggerFactory;

/**
 * A real cluster of processes on this machine ({@code partita cluster up}, through the same code),
 * with what the "many hosts" benchmark and the cluster tests need of it: the plan tables as they
 * are now, waiting until both hosts' plans rest on their own measurements, calls through a Kafka
 * client and through the gateways, and the faults of {@code partita cluster fault}. Closing it
 * takes the cluster down.
 */
public final class ManyHosts implements AutoCloseable {
  /** The base model the load runs on: the demo MLP, served on every host in the same version. */
  public static final String LOAD_MODEL = DemoMlp.MODEL_NAME;
  public static final String LOAD_SERVICE_MODEL = "demo";

  private final Path dir;
  private final PrintStream err;
  private final Topics topics = Topics.withDefaultPrefix();
  private final Codecs codecs = Codecs.singleObject();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private ClusterState state;
  private PartitaClient client;
  private boolean down;
  private boolean confined;
  private final Thread downAtExit = new Thread(this::close, "partita-cluster-down-at-exit");
  private final ConcurrentHashMap<String, Integer> delivered = new ConcurrentHashMap<>();
  private final AtomicLong deliveredTwice = new AtomicLong();

  private ManyHosts(Path dir, PrintStream err, ClusterState state) {
    this.dir = dir;
    this.err = err;
    this.state = state;
  }

  /**
   * Starts a cluster of three brokers, two planners, two gateways and a worker host per quota, on
   * the cluster demo repository, and returns once every model answers.
   *
   * @param envFile the shared settings, or null for the launcher's copy of {@code compose/partita.env}
   */
  public static ManyHosts up(Path dir, List<Double> workerCpus, Path envFile, PrintStream err) throws Exception {
    ClusterSpec spec = new ClusterSpec(dir.toAbsolutePath(), 3, workerCpus, 2, null, NetworkMode.AUTO,
        ClusterSpec.DEFAULT_TIMEOUT, envFile, List.of(), System.getProperty("java.class.path"));
    Cluster.UpResult up = Cluster.up(spec, err);
    ManyHosts cluster = new ManyHosts(dir.toAbsolutePath(), err, up.state());
    // The load generator (this JVM) runs beside the brokers, planners and gateways, not on the
    // worker hosts' CPUs, whose quotas are what the figures are about.
    cluster.confined = Cluster.confineLoadGenerator(dir.toAbsolutePath(), ProcessHandle.current().pid());
    // Ctrl-C (or a kill) of the bench or a test takes the cluster down with it: eleven JVMs,
    // namespaces and cgroups left running would otherwise outlive the run that made them.
    Runtime.getRuntime().addShutdownHook(cluster.downAtExit);
    return cluster;
  }

  public ClusterState state() {
    return state;
  }

  public String bootstrap() {
    return state.bootstrap();
  }

  /** The worker hosts, {@code host-1} first. */
  public List<String> hosts() throws IOException {
    state = ClusterState.read(dir).orElseThrow();
    return state.groups(GroupKind.HOST).stream().map(GroupRecord::name).toList();
  }

  public List<URI> gateways() {
    return state.groups(GroupKind.GATEWAY).stream()
        .map(g -> URI.create("http://" + g.address() + ":" + g.port("http"))).toList();
  }

  /** Injects a fault ({@code partita cluster fault}); returns what it printed. */
  public String fault(Cluster.Fault fault, String target, Double cpus) throws Exception {
    String out = Cluster.fault(dir, fault, target, cpus);
    state = ClusterState.read(dir).orElseThrow();
    return out;
  }

  /** The plan tables and what they were made from, as they are now. */
  public record Snapshot(SortedMap<String, TimingEvent> timings, SortedMap<String, VersionChoice> versions,
      SortedMap<String, PartitionPlan> partitions, SortedMap<String, SlotAssignment> assignments,
      SortedMap<String, HostEnvironment> hosts) {

    /** The planned capacity (items/s) of the slots a host has of a base model. */
    public double capacity(String host, String model) {
      return ManyHosts.capacity(assignments.values(), host, model);
    }

    /** A host's share of the planned capacity of a base model over {@code hosts}. */
    public double capacityShare(String host, String model, List<String> hosts) {
      return ManyHosts.capacityShare(assignments.values(), host, model, hosts);
    }

    public VersionChoice version(String model, String host) {
      return versions.get(model + "/" + host);
    }

    /** The live partition plan of a model's chosen version on a host's CPU pool, or null. */
    public PartitionPlan partition(String model, String host) {
      VersionChoice v = version(model, host);
      return v == null || v.getChosenVersion() == null ? null
          : partitions.get(model + "/" + v.getChosenVersion() + "/" + host + "/cpu");
    }

    /** Whether a host's plan of a model rests on its own timings (not a default placement, not predicted from another host). */
    public boolean measured(String model, String host) {
      PartitionPlan p = partition(model, host);
      return p != null && p.getPlanned() && !p.getDefaultPlan() && p.getPredictedFrom() == null
          && assignments.values().stream().anyMatch(a -> a.getHost().equals(host) && a.getModel().equals(model)
              && a.getCapacity() > 0);
    }
  }

  /** Reads every plan table and input of interest to its end. */
  public Snapshot snapshot() {
    return new Snapshot(read(topics.profileTimings(codecs), e -> e.getOk() && e.getGrouping().isEmpty()),
        read(topics.planVersions(codecs), v -> true), read(topics.planPartitions(codecs), p -> true),
        read(topics.planAssignments(codecs), a -> true), read(topics.hostEnvironments(codecs), h -> true));
  }

  /** The latest record per key of a topic (timings: per model/version/host/size/batch/provider). */
  private <V extends SpecificRecord> SortedMap<String, V> read(Topic<V> topic, Predicate<V> keep) {
    SortedMap<String, V> out = new TreeMap<>();
    Properties p = KafkaClients.consumer(bootstrap(), new Properties());
    p.put("isolation.level", "read_committed");
    TopicFollower follower = new TopicFollower(new KafkaConsumer<>(p), TopicFollower.Settings.fromBeginning(topic.name(), topic.name()),
        LoopGuard.unregistered("many-hosts", LoggerFactory.getLogger(ManyHosts.class)), record -> {
          if (record.value() == null) {
            out.remove(record.key());
            return;
          }
          V value = topic.decode(record.value());
          String key = value instanceof TimingEvent e
              ? String.join("/", e.getModel(), e.getVersion(), e.getHost(), Integer.toString(e.getSize()),
                  Integer.toString(e.getBatch()), e.getProvider())
              : record.key();
          if (keep.test(value)) {
            out.put(key, value);
          }
        });
    if (!follower.readToEnd(Duration.ofSeconds(60))) {
      throw new IllegalStateException("could not read " + topic.name() + " to its end within 60 s");
    }
    return out;
  }

  /**
   * Waits until every host's plan of every model rests on its own measurements (the profilers
   * measured each host and the planner planned from that), every host's start-up profiles have
   * ended (a point that did not settle is measured again at their end, and may change a version
   * choice), and the version choices held over one more look 5 s later. Prints what is still
   * awaited.
   */
  public Snapshot awaitMeasuredPlans(List<String> hosts, List<String> models, Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    Snapshot s = snapshot();
    Snapshot before = null;
    while (true) {
      List<String> waiting = new ArrayList<>();
      for (String h : hosts) {
        for (String m : models) {
          if (!s.measured(m, h)) {
            waiting.add(m + " on " + h);
          }
        }
      }
      Map<String, Long> profiled = startProfilesEnded();
      for (String h : hosts) {
        if (profiled.getOrDefault(h, 0L) < models.size()) {
          waiting.add("the start-up profiles of " + h);
        }
      }
      if (waiting.isEmpty()) {
        if (before != null && before.versions().equals(s.versions())) {
          return s;
        }
        waiting.add("the version choices to hold for 5 s");
        before = s;
      } else {
        before = null;
      }
      if (System.nanoTime() > end) {
        throw new IllegalStateException("no plan resting on measurements within " + timeout.toSeconds() + " s for " + waiting);
      }
      err.println("Waiting for plans from measurements: " + String.join(", ", waiting));
      TimeUnit.SECONDS.sleep(5);
      s = snapshot();
    }
  }

  /** Start-up profile requests that ended (done or failed), by host. */
  private Map<String, Long> startProfilesEnded() {
    Map<String, Long> ended = new TreeMap<>();
    for (ProfileStatus st : read(topics.profileStatus(codecs), st -> !st.getState().equals(AvroMapper.RUNNING)).values()) {
      if (ProfilerService.isStartProfile(st.getRequestId(), st.getHost())) {
        ended.merge(st.getHost(), 1L, Long::sum);
      }
    }
    return ended;
  }

  /** The Kafka client the load uses (its own reply topic), started on first use. */
  public synchronized PartitaClient client() {
    if (client == null) {
      client = PartitaClient.start(PartitaClient.Config.of(bootstrap()).withClientId("many-hosts-" + ProcessHandle.current().pid())
          .withTimeout(Duration.ofSeconds(60)));
      // Every answer the client hands to a caller, by request id: a second one for an id is a
      // duplicate that got past the client's de-duplication.
      client.onReplyTiming(t -> {
        if (delivered.merge(t.id(), 1, Integer::sum) == 2) {
          deliveredTwice.incrementAndGet();
        }
      });
    }
    return client;
  }

  /** Answers the Kafka client handed to a caller for a request it had already answered (must stay 0). */
  public long deliveredTwice() {
    return deliveredTwice.get();
  }

  /** The gateways' gRPC addresses, {@code host:port}. */
  public List<String> grpcTargets() {
    return state.groups(GroupKind.GATEWAY).stream().map(g -> g.address() + ":" + g.port("grpc")).toList();
  }

  /** The gateways' ids ({@code gateway.id}), which name their reply topics. */
  public List<String> gatewayIds() {
    return state.groups(GroupKind.GATEWAY).stream().map(GroupRecord::name).toList();
  }

  public String topicPrefix() {
    return topics.prefix();
  }

  /** A worker host's CPU quota, in cores. */
  public double quota(String host) throws IOException {
    state = ClusterState.read(dir).orElseThrow();
    return state.group(host).orElseThrow().quota();
  }

  /** The model repository the cluster serves (the cluster demo set written under its directory). */
  public Path modelRepo() {
    return dir.resolve("models");
  }

  /** One row of the demo MLP's input. */
  public static List<Tensor> demoRow(long seed) {
    ByteBuffer data = ByteBuffer.allocate(DemoMlp.INPUT_SIZE * 4).order(ByteOrder.LITTLE_ENDIAN);
    float[] values = InferBodies.randomFloats(DemoMlp.INPUT_SIZE, seed);
    for (float v : values) {
      data.putFloat(v);
    }
    return List.of(Tensor.newBuilder().setName(DemoMlp.INPUT).setDatatype("FP32").setShape(List.of(1L, (long) DemoMlp.INPUT_SIZE))
        .setData(data.flip()).build());
  }

  /** One item of demo-heavy's input ([1, 64, 128]). */
  public static List<Tensor> heavyRow(long seed) {
    ByteBuffer data = ByteBuffer.allocate(DemoHeavy.TOKENS * DemoHeavy.FEATURES * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (float[] token : DemoHeavy.sampleInput(seed)) {
      for (float v : token) {
        data.putFloat(v);
      }
    }
    return List.of(Tensor.newBuilder().setName(DemoHeavy.INPUT).setDatatype("FP32")
        .setShape(List.of(1L, (long) DemoHeavy.TOKENS, (long) DemoHeavy.FEATURES)).setData(data.flip()).build());
  }

  /** The same row as an OIP JSON infer body. */
  public static byte[] demoBody(long seed) {
    StringBuilder b = new StringBuilder("{\"inputs\":[{\"name\":\"").append(DemoMlp.INPUT)
        .append("\",\"datatype\":\"FP32\",\"shape\":[1,").append(DemoMlp.INPUT_SIZE).append("],\"data\":[");
    float[] values = InferBodies.randomFloats(DemoMlp.INPUT_SIZE, seed);
    for (int i = 0; i < values.length; i++) {
      b.append(i == 0 ? "" : ",").append(values[i]);
    }
    return b.append("]}]}").toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Calls of the demo service model: from the Kafka client and over HTTP through both gateways. */
  public Map<String, Caller> demoCallers() {
    Map<String, Caller> callers = new LinkedHashMap<>();
    List<Tensor> row = demoRow(7);
    callers.put("kafka", Callers.kafka(client(), LOAD_MODEL, LOAD_SERVICE_MODEL, row));
    callers.put("http", new Callers.Http(http, gateways(), LOAD_SERVICE_MODEL, demoBody(7), Duration.ofSeconds(30)));
    return callers;
  }

  /**
   * The cluster's capacity for the demo model, measured: {@code inFlight} calls kept outstanding
   * from the Kafka client for {@code length} after a warm-up; answered calls per second.
   */
  public double measureCapacity(int inFlight, Duration warmup, Duration length) throws InterruptedException {
    List<Tensor> row = demoRow(11);
    PartitaClient c = client();
    LoadRunner.Result r = LoadRunner.inFlight(inFlight, warmup, length,
        () -> c.infer(LOAD_MODEL, LOAD_SERVICE_MODEL, row).thenApply(reply -> {
          if (reply.getError() != null) {
            throw new IllegalStateException(reply.getError().getCode() + ": " + reply.getError().getMessage());
          }
          return reply;
        }), LoadRunner.Window.NONE);
    return r.throughput();
  }

  /**
   * Open-loop load on the demo model ({@link #demoCallers}) with the plan it ran under: each host's
   * share of the load model's planned capacity ({@link Snapshot#capacityShare}), read as the load
   * starts and every 10 s while it runs, and their mean.
   */
  public record SharedLoad(Calls calls, Map<String, Double> capacityShare, List<Map<String, Double>> readings) {}

  /**
   * Runs {@link OpenLoad} at {@code perSecond} and reads the plan's capacity shares while it runs.
   * The shares are what the workers share the request partitions by, and they move under load: the
   * slots' serving evidence cuts a capacity toward the rate a slot serves at. A plan read minutes
   * before the load (while it rested on idle profiles) is not what routed it, nor is one read after
   * it (a slot that served nothing under the load gets its figure back once the load ends).
   */
  public SharedLoad openLoadUnderThePlan(double perSecond, Duration length, Duration grace) throws Exception {
    List<String> hosts = hosts();
    List<Map<String, Double>> readings = Collections.synchronizedList(new ArrayList<>());
    readings.add(shares(hosts));
    ExecutorService reader = Executors.newSingleThreadExecutor();
    Calls calls;
    try {
      calls = OpenLoad.run(demoCallers(), perSecond, length, grace, second -> {
        if (second % 10 == 0) {
          reader.submit(() -> readings.add(shares(hosts)));
        }
      });
    } finally {
      reader.shutdown();
      reader.awaitTermination(2, TimeUnit.MINUTES);
    }
    Map<String, Double> mean = new TreeMap<>();
    for (String h : hosts) {
      mean.put(h, readings.stream().mapToDouble(r -> r.get(h)).average().orElse(Double.NaN));
    }
    return new SharedLoad(calls, mean, List.copyOf(readings));
  }

  /** Each host's share of the load model's planned capacity now, from the assignments table alone. */
  private Map<String, Double> shares(List<String> hosts) {
    Collection<SlotAssignment> assignments = read(topics.planAssignments(codecs), a -> true).values();
    Map<String, Double> out = new TreeMap<>();
    hosts.forEach(h -> out.put(h, capacityShare(assignments, h, LOAD_MODEL, hosts)));
    return out;
  }

  /** The planned capacity (items/s) of the slots a host has of a base model. */
  static double capacity(Collection<SlotAssignment> assignments, String host, String model) {
    return assignments.stream().filter(a -> a.getHost().equals(host) && a.getModel().equals(model))
        .mapToDouble(SlotAssignment::getCapacity).sum();
  }

  /** A host's share of the planned capacity of a base model over {@code hosts}. */
  static double capacityShare(Collection<SlotAssignment> assignments, String host, String model, List<String> hosts) {
    double total = hosts.stream().mapToDouble(h -> capacity(assignments, h, model)).sum();
    return total > 0 ? capacity(assignments, host, model) / total : Double.NaN;
  }

  /** Waits until {@code test} holds on a fresh snapshot, or throws naming {@code what}. */
  public Snapshot await(String what, Duration timeout, Predicate<Snapshot> test) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (true) {
      Snapshot s = snapshot();
      if (test.test(s)) {
        return s;
      }
      if (System.nanoTime() > end) {
        throw new IllegalStateException(what + ": not within " + timeout.toSeconds() + " s");
      }
      TimeUnit.SECONDS.sleep(2);
    }
  }

  /** A call that completes after {@code delay}, for pacing steps inside a load's per-second hook. */
  static CompletableFuture<Void> after(Duration delay) {
    return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS));
  }

  @Override
  public synchronized void close() {
    if (Thread.currentThread() != downAtExit) {
      try {
        Runtime.getRuntime().removeShutdownHook(downAtExit);
      } catch (IllegalStateException | IllegalArgumentException shuttingDownOrNotAdded) {
        // the JVM is exiting (the hook runs, or ran) or up() never added it: nothing to remove
      }
    }
    if (client != null) {
      client.close();
      client = null;
    }
    if (confined) {
      confined = false;
      try {
        Cluster.release(ProcessHandle.current().pid());
      } catch (IOException e) {
        err.println("Could not move this process out of the cluster's load cgroup: " + e.getMessage());
      }
    }
    if (!down) {
      down = true;
      Cluster.Leftovers left = Cluster.down(dir, err);
      if (!left.empty()) {
        err.println("partita cluster down left " + left);
      }
    }
  }
}
